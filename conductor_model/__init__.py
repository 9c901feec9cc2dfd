"""The conductor as a model: the `conductor/<pool>` Inspect model provider (`provider`), the
OpenAI-compatible endpoint over it (`serve`), and the project's Inspect entry point (`_registry`)."""
