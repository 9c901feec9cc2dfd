from experiments.seeds.sweep import main

main()
