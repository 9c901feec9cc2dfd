"""Trained routers (the paper's RouterDC and MASRouter baselines): per-question worker
outcomes (`outcomes`), query features (`features`), the two routers (`router_dc`,
`mas_router`), their Inspect solvers (`solvers`) and the training command (`train`)."""
