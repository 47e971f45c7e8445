# Every answer right or refused: scenarios a run must refuse, the exit-code table, outputs
# checked before anything runs, caveats beside a prediction, the test runner's own planted
# failures and README's loop. Included by tests/CMakeLists.txt, in its scope (DDPSIM_BIN,
# WORK, lab, ddpsim_cli_test).

# Each tests/refused/*.yaml starts with "# expect: <regex>": a well-formed scenario whose run would
# overflow simulated time or pass the work budget is refused (exit 2, named keys), never a number.
ddpsim_expect_files(refused run)
# ddpsim check prints the estimate run refuses on; --max-rank-ops and --max-memory-gb raise the budget.
ddpsim_cli_test(check_estimate 0 "jitter_past_budget.yaml: ok \\(1 world size\\(s\\), 10000000 iterations\\); ddpsim run: 6.29e\\+13 rank-operations \\(2 simulations\\), about 11464 MB of state"
                check ${CMAKE_CURRENT_SOURCE_DIR}/refused/jitter_past_budget.yaml)
ddpsim_cli_test(run_budget_raised 2 "past the budget of 8 GB.*--max-memory-gb to raise the budget"
                run ${CMAKE_CURRENT_SOURCE_DIR}/refused/jitter_past_budget.yaml --max-rank-ops 1e14)
# README.md's table of exit codes, walked: each row's example exits with its code (tests/exit_codes.sh).
ddpsim_test(NAME cli.exit_codes REGEX "README's table matches"
            COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/exit_codes.sh ${PROJECT_SOURCE_DIR} ${DDPSIM_BIN})
# The runner itself fails what PASS_REGULAR_EXPRESSION and WILL_FAIL passed (tests/expect_selftest.sh).
ddpsim_test(NAME tests.runner_catches_planted REGEX "every planted failure caught"
            COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/expect_selftest.sh)
# A prediction built on placeholders, or on CPU times under a cluster of GPUs, says so in the table
# (and the JSON's "caveats"); a scenario without either has neither (every golden).
ddpsim_cli_test(caveat_placeholder 0 "mlp|placeholder_collective: analytic engine \\(gloo\\).*\nCAVEAT: the collective section's latency and bandwidth are placeholders \\(collective.placeholder: true\\), not measured"
                run ${CMAKE_CURRENT_SOURCE_DIR}/caveats/placeholder_collective.yaml)
ddpsim_cli_test(caveat_cpu_times_on_gpus 0 "CAVEAT: the model's times were measured on a CPU \\(model.measured_on: cpu\\) but run here on a cluster of GPUs \\(1 x 8\\)"
                run ${CMAKE_CURRENT_SOURCE_DIR}/caveats/cpu_times_on_gpu_cluster.yaml)
# README's real-backend loop, run as written (tests/readme_loop.sh): every file each command reads is
# made by a command before it. Labelled measurement (it trains real jobs), alone on the cores.
ddpsim_test(NAME readme.real_loop REGEX "readme_loop: real_loop ran as written"
            PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE LABELS measurement
            COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/readme_loop.sh ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR} real_loop
                    ${WORK}/readme_real_loop)
# Outputs are checked before anything is simulated: two options naming one file, a folder, a path
# that cannot be written; each refused with exit 2 and nothing printed of a simulation.
ddpsim_cli_test(run_same_output_twice 2 "^ddpsim: error: the command line: key '--csv': value ./x.out: expected a file of its own: --json writes it too\n$"
                run ${lab} --json x.out --csv ./x.out)
ddpsim_cli_test(run_output_folder 2 "^ddpsim: error: /tmp: key '--json': expected a file, not a folder\n$" run ${lab} --json /tmp)
ddpsim_cli_test(validate_report_unwritable 2 "^ddpsim: error: /proc/x.*: (No such file or directory|Permission denied|.*)\n$"
                validate --scenario ${PROJECT_SOURCE_DIR}/scenarios/real_mlp_gpu.yaml
                --measured ${PROJECT_SOURCE_DIR}/validate/gpu/h200_w1/train_w1 --report /proc/x/y)
ddpsim_cli_test(advise_same_output_twice 2 "key '--html': value a.out: expected a file of its own: --plot writes it too"
                advise ${lab} --plot a.out --html a.out)
ddpsim_cli_test(parse_error_form 2 "^ddpsim: error: the command line: .*\nRun with --help for more information.\n$" run ${lab} --bogus)
# run --world-size W[,W...] instead of an edit of the YAML.
ddpsim_cli_test(run_world_size_option 0 "scaling_lab: analytic engine.*\n3 +129.0 +129.0 +2.8x.*\n5 +133.4 " run ${lab} --world-size 3,5)
ddpsim_cli_test(run_world_size_past_cluster 2 "key '--world-size': value 9: expected at most 8 ranks"
                run ${CMAKE_CURRENT_SOURCE_DIR}/caveats/cpu_times_on_gpu_cluster.yaml --world-size 9)

# Extreme inputs that have an answer: it is right and readable.
ddpsim_cli_test(extreme_zero_step 0 "\n2 +0.000 +0.000 +- +-\n" run ${CMAKE_CURRENT_SOURCE_DIR}/extreme/zero_step.yaml)
ddpsim_cli_test(extreme_huge_times 0 "\n8 +887078656000.0 887078656000.0 0.0x +0.2%"
                run ${CMAKE_CURRENT_SOURCE_DIR}/extreme/huge_times_fsdp.yaml)
# advise refuses a scenario whose every configuration would pass ddpsim run's budget.
ddpsim_cli_test(advise_past_budget 2 "jitter_past_budget.yaml: the run is estimated at .*--max-rank-ops to raise the budget"
                advise ${CMAKE_CURRENT_SOURCE_DIR}/refused/jitter_past_budget.yaml)
# The JSON is part of the work: 2^20 ranks' records (4.4 GB to build, an 815 MB file) pass a 2 GB budget.
ddpsim_cli_test(run_json_past_budget 2 "a [0-9]+ MB JSON: past the budget of 2 GB; .*no --json or --html at this many ranks"
                run ${CMAKE_CURRENT_SOURCE_DIR}/refused/latency_huge_world.yaml --world-size 1048576 --json x.json
                --max-memory-gb 2)
