"""GRPO training of a Conductor with TRL: `nox -s train -- training/recipes/<name>.yaml`.

train.py (recipe -> dataset -> reward -> trainer -> train -> save), options.py (the recipe's options
and checks), data.py (the training mixture, never from test items), model_prep.py (the policy loaded,
frozen and patched; the embedded GGUF made trainable), trainer.py (reward, callbacks, GRPOTrainer),
warmup.py (the optional format warm-up before GRPO), rewards.py / rollouts.py / recursion.py (the
reward: the evaluation's own round and checks, per-rollout log and metrics, recursion training),
output_dir.py and run_info.py (what a run leaves in its output_dir). Sweeps, curves and the GPU
check that run this are in experiments/."""
