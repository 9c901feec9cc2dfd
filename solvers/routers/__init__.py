"""Trained routers (the paper's RouterDC and MASRouter baselines): training questions
(`data`), per-question worker outcomes and their cache (`outcomes`), query features
(`features`), the two routers (`router_dc`, `mas_router`; numpy pieces in `nn`), their
Inspect solvers (`solvers`) and the training command (`train`)."""
