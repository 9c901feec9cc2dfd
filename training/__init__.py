"""GRPO training of a Conductor with TRL: `nox -s train -- training/recipes/<name>.yaml`.

train.py (recipes -> GRPOTrainer), data.py (the training mixture), model_prep.py (the embedded
GGUF made trainable), rewards.py / rollouts.py / recursion.py (the reward: the evaluation's own
round and checks), curves.py (PNG curves of a run)."""
