"""GRPO training of a Conductor with TRL: `nox -s train -- training/recipes/<name>.yaml`.

train.py (YAML recipes -> TRL's GRPOTrainer; checkpoints, resume, dry runs), data.py (the
training mixture, never from test items), model_prep.py (the embedded GGUF made trainable),
warmup.py (the optional format warm-up before GRPO), rewards.py / rollouts.py / recursion.py
(the reward: the evaluation's own round and checks, per-rollout log and metrics, recursion
training), curves.py (PNG/CSV curves of a run, incl. worker choice per domain)."""
