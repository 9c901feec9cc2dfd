from experiments.cost_sweep.sweep import main

main()
