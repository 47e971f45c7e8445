# The tests that run Python and PyTorch (ddpsim_torch, the oracles against real DDP, the flight
# recorder, the estimators, the device script on the CPU), the installed tool and the package:
# included by tests/CMakeLists.txt, in its scope (DDPSIM_BIN, WORK, DDPSIM_PYTHON, ddpsim_cli_test); each through ddpsim_test
# (cmake/ddpsim_test.cmake), which checks the exit code beside the output.

# The buckets against a real PyTorch DDP (gloo, one process); skipped without
# torch and torchvision for ${DDPSIM_PYTHON} (scripts/setup.sh's environment, CMakeLists.txt).
ddpsim_test(NAME oracle.torch_buckets
            NEEDS torch
            PROPERTIES TIMEOUT 600 RESOURCE_LOCK torch LABELS measurement
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\" \"$2\""
                 ${CMAKE_CURRENT_SOURCE_DIR}/torch_oracle.py ${DDPSIM_BIN} ${WORK}/oracle)
# ddpsim_torch profile on every recipe in python/recipes/: the scenario loads and runs, and its
# gradient-ready order is the one real DDP recorded (tests/torch_profile.py); skipped without torch.
ddpsim_test(NAME oracle.torch_profile
            NEEDS torch
            PROPERTIES TIMEOUT 300 RESOURCE_LOCK torch LABELS measurement
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\" \"$2\""
                 ${CMAKE_CURRENT_SOURCE_DIR}/torch_profile.py ${DDPSIM_BIN} ${WORK}/torch_profile)
# ddpsim's prediction of real DistributedDataParallel on four recipes (profile at W = 1, sweep and
# measure at W = 2, gloo; contention fitted on ResNet-18 and applied to the others; tests/torch_ddp.py).
# The target (median |error| at most 5 % and below the closed form, out of sample) is printed, met or
# not: on this 2-core machine single rows have come out 19 to 53 % low (docs/validation.md), so it is a
# measurement, reported, not gated. The test fails on a broken pipeline (a time that is not a positive
# finite number). It runs alone (RUN_SERIAL): a test beside it on the two cores slowed the measured MLP
# step to 2.1 x its prediction in one CI run.
ddpsim_test(NAME oracle.torch_ddp
            NEEDS torch
            PROPERTIES TIMEOUT 600 RESOURCE_LOCK torch RUN_SERIAL TRUE
                     LABELS measurement
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\" \"$2\" "
                 ${CMAKE_CURRENT_SOURCE_DIR}/torch_ddp.py ${DDPSIM_BIN} ${WORK}/torch_ddp)
# The shipped hang scenarios run for real (gloo, W = 4, flight recorder on, 5 s timeout): ddpsim
# explain, PyTorch's own fr_trace and ddpsim's simulation of the same job must name the same
# collective_seq_id and culprit (tests/torch_flight_recorder.py; docs/flight-recorder.md).
ddpsim_test(NAME oracle.torch_flight_recorder
            NEEDS torch
            PROPERTIES TIMEOUT 300 RESOURCE_LOCK torch
                     LABELS measurement
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\" \"$2\""
                 ${CMAKE_CURRENT_SOURCE_DIR}/torch_flight_recorder.py ${DDPSIM_BIN} ${WORK}/torch_flight_recorder)
# PyTorch's own estimators beside ddpsim (scripts/estimators.py; docs/validation.md): peak memory per rank
# of the four recipes under DDP at W = 1 and 2 against MemTracker's, bound 10 % (measured: 2.4 % at most);
# RuntimeEstimator's two modes need an accelerator in the pinned torch and say so.
ddpsim_test(NAME oracle.torch_estimators
            NEEDS torch
            PROPERTIES TIMEOUT 600 RESOURCE_LOCK torch RUN_SERIAL TRUE
                     LABELS measurement
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\" \"$2\" --max-error-pct 10"
                 ${PROJECT_SOURCE_DIR}/scripts/estimators.py ${DDPSIM_BIN} ${WORK}/torch_estimators)
# validate/gpu/torch_w1.sh, the device's PyTorch procedure, run with --cpu: every step that needs no GPU
# (profile, memory, run, a scheduled trace imported, the estimators), so the script is ready when one is lent.
ddpsim_test(NAME gpu.torch_w1_on_cpu
            NEEDS torch
            PROPERTIES TIMEOUT 600 RESOURCE_LOCK torch LABELS measurement
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] && ${DDPSIM_PYTHON} -c 'import torch' 2>/dev/null || { echo 'SKIPPED: no torch for ${DDPSIM_PYTHON}'; exit 77; }; DDPSIM_PYTHON=${DDPSIM_PYTHON} exec \"$0\" \"$1\" \"$2\" --cpu"
                 ${PROJECT_SOURCE_DIR}/validate/gpu/torch_w1.sh ${DDPSIM_BIN} ${WORK}/gpu_torch_w1_on_cpu)
# profile --collective's fit at the job's buckets, on a real sweep over a 1 Gbit/s emulated link
# (tests/fit_test.py; no torch needed).
ddpsim_test(NAME python.fit
            REGEX "all passed"
            NEEDS torch
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\""
                 ${CMAKE_CURRENT_SOURCE_DIR}/fit_test.py)
# ddpsim profile|sweep|measure|overlap|network: ddpsim_torch's verbs run by the ddpsim binary (cli/torch_verbs.cpp).
# Without an interpreter that has torch: exit 2, how to make one from the pins. With one, from outside the source tree:
# a profile written, no PYTHONPATH set (skipped where ${DDPSIM_PYTHON} has no torch).
ddpsim_cli_test(torch_verb_no_torch 2 "no Python interpreter with torch \\(tried /bin/false\\); make one from the pins \\(python3 -m venv V && V/bin/pip install -r .*/python/requirements.txt\\) and set DDPSIM_PYTHON=V/bin/python"
                measure python/recipes/mlp.py --world-size 2 --out x)
set_tests_properties(cli.torch_verb_no_torch PROPERTIES ENVIRONMENT "DDPSIM_PYTHON=/bin/false")
ddpsim_test(NAME cli.torch_verb_profile
            REGEX "profile: 6 parameters.*wrote mlp.yaml"
            NEEDS torch
            PROPERTIES RESOURCE_LOCK torch
            COMMAND sh -c "${DDPSIM_PYTHON} -c 'import torch' 2>/dev/null || { echo 'SKIPPED: no torch'; exit 77; }; mkdir -p \"$2\" && cd \"$2\" && env -u PYTHONPATH \"$0\" profile \"$1\" --out mlp.yaml --steps 3 --warmup 1 --bare && \"$0\" check mlp.yaml"
                 ${DDPSIM_BIN} ${PROJECT_SOURCE_DIR}/python/recipes/mlp.py ${WORK}/torch_verb)
# The overlap micro-benchmark end to end (gloo, W = 2, one small size): its JSON read by calibrate --overlap and
# by profile --overlap, whose scenario carries both slowdowns and loads.
ddpsim_test(NAME cli.torch_verb_overlap
            REGEX "overlap: 2 ranks, gloo: compute_slowdown [0-9.e+-]+, comm_slowdown [0-9.e+-]+; wrote o.json\n.*\ncontention:\n  compute_slowdown: [0-9.e+-]+\n  comm_slowdown: [0-9.e+-]+\n.*profile: 6 parameters.*\ncontention: +# measured apart from any training run: o.json: gloo on cpu, 2 ranks.*\n  comm_slowdown: [0-9.e+-]+ .*mlp.yaml: ok"
            NEEDS torch
            PROPERTIES RESOURCE_LOCK torch
            COMMAND sh -c "${DDPSIM_PYTHON} -c 'import torch' 2>/dev/null || { echo 'SKIPPED: no torch'; exit 77; }; mkdir -p \"$2\" && cd \"$2\" && \"$0\" overlap --world-size 2 --mb 1 --reps 2 --chunks 10 --out o.json && \"$0\" calibrate --overlap o.json --out c.yaml && \"$0\" profile \"$1\" --overlap o.json --out mlp.yaml --steps 3 --warmup 1 --bare && cat mlp.yaml && \"$0\" check mlp.yaml"
                 ${DDPSIM_BIN} ${PROJECT_SOURCE_DIR}/python/recipes/mlp.py ${WORK}/torch_verb_overlap)
# cmake --install into a fresh prefix, the installed ddpsim run from elsewhere (tests/install_test.sh).
if(SIMGRID_FOUND)
  set(install_simgrid 1)
else()
  set(install_simgrid 0)
endif()
ddpsim_test(NAME install.prefix
            REGEX "install ok \\(cmake\\)"
            PROPERTIES RESOURCE_LOCK torch
            COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install_test.sh cmake ${CMAKE_BINARY_DIR} ${WORK}/install ${install_simgrid})
# The Debian package (cpack -G DEB): its name and Depends, extracted into a fresh root and run
# from there. Labelled "package": the sanitizer and no-SimGrid builds leave it out (scripts/test.sh).
ddpsim_test(NAME package.deb
            REGEX "install ok \\(deb\\)"
            PROPERTIES RESOURCE_LOCK torch LABELS package
            COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install_test.sh deb ${CMAKE_BINARY_DIR} ${WORK}/package ${install_simgrid}
                 ${PROJECT_VERSION})
# ddpsim_torch's pure parts under pytest (python/tests; no torch needed; the API's tests are python.api's).
ddpsim_test(NAME python.pytest
            REGEX "[0-9]+ passed"
            NOT_REGEX "skipped|failed"
            NEEDS torch
            COMMAND sh -c "${DDPSIM_PYTHON} -c 'import pytest' 2>/dev/null || { echo 'SKIPPED: no pytest for ${DDPSIM_PYTHON} (scripts/setup.sh)'; exit 77; }; cd \"$0\" && exec ${DDPSIM_PYTHON} -m pytest -q -p no:cacheprovider --ignore=tests/api tests"
                 ${PROJECT_SOURCE_DIR}/python)
# The Python API (python/tests/api): the build's package (build/python/ddpsim, its core built where the
# interpreter has nanobind: scripts/setup.sh's environment) against the ddpsim command, byte for byte, and
# the example notebook executed by a Jupyter kernel.
if(TARGET ddpsim_core)
  ddpsim_test(NAME python.api
              REGEX "[0-9]+ passed"
              NOT_REGEX "skipped|failed|error"
              NEEDS torch
              PROPERTIES ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python:${PROJECT_SOURCE_DIR}/python;DDPSIM_BIN=${DDPSIM_BIN}"
              COMMAND sh -c "${DDPSIM_PYTHON} -c 'import torch, nbclient' 2>/dev/null || { echo 'SKIPPED: no torch or nbclient for ${DDPSIM_PYTHON} (scripts/setup.sh)'; exit 77; }; cd \"$0\" && exec ${DDPSIM_PYTHON} -m pytest -q -p no:cacheprovider -p no:randomly \"$1\""
                   ${WORK} ${PROJECT_SOURCE_DIR}/python/tests/api)
endif()
# The wheel (pyproject.toml): built offline from the checkout, installed in a fresh virtual environment,
# the example notebook run there from outside the source tree (tests/python_wheel.sh). Minutes: it
# builds the project again (from ccache where the build's objects are there).
ddpsim_test(NAME python.wheel
            REGEX "wheel ok"
            NEEDS torch
            PROPERTIES LABELS package TIMEOUT 1800
            COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python_wheel.sh ${PROJECT_SOURCE_DIR} ${WORK}/python_wheel ${PROJECT_VERSION} ${DDPSIM_PYTHON})
# The public C++ API installed (cmake --install) and used by a program compiled against the prefix alone
# (tests/api_installed.sh, tests/api_example.cpp).
ddpsim_test(NAME api.installed
            REGEX "api installed ok"
            PROPERTIES RESOURCE_LOCK torch LABELS package
            COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/api_installed.sh ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${WORK}/api_installed)
# The comm hook side of ddpsim_torch (tests/hooks_test.py; no torch needed): options refused before any rank
# starts, PowerSGD on gloo on one bucket only, the matrices timed those ddpsim compresses, the written
# ddp.comm_hook block loading in ddpsim run.
ddpsim_test(NAME python.hooks
            REGEX "all passed"
            NEEDS torch
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\""
                 ${CMAKE_CURRENT_SOURCE_DIR}/hooks_test.py ${DDPSIM_BIN})
# The emulated network itself (tests/network_test.py): bad rates refused with exit 2, an unprivileged
# user told why, each link checked and recorded, each rank's sockets on its own address (the shim), a
# process without a rank left alone. Skipped where no network namespace can be made.
ddpsim_test(NAME network.emulated
            REGEX "all passed"
            NEEDS torch netns
            # Labelled measurement with the torch tests: it runs Python and the unsanitized shim only, so the
            # sanitizer and no-SimGrid builds skip it; alone (RUN_SERIAL): its link check needs the cores to itself.
            PROPERTIES TIMEOUT 120 RESOURCE_LOCK torch RUN_SERIAL TRUE LABELS measurement
                       ENVIRONMENT "DDPSIM_NETBIND=$<TARGET_FILE:ddpsim_netbind>"
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\""
                 ${CMAKE_CURRENT_SOURCE_DIR}/network_test.py ${WORK}/network)
# The emulated cluster of hosts (tests/cluster_test.py; docs/emulated-network.md, "A cluster of hosts"):
# refusals with exit 2, each rank in its own host with torchrun's environment, the failing rank's exit
# code, links checked (two levels, a slow rank), incast capped at the receiver's rate, and no namespace
# or process left after a run killed midway by SIGKILL or SIGTERM. About 40 s; skipped where not root.
ddpsim_test(NAME network.cluster
            REGEX "all passed"
            NEEDS torch netns
            PROPERTIES TIMEOUT 300 RESOURCE_LOCK torch RUN_SERIAL TRUE LABELS measurement
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\" \"$2\""
                 ${CMAKE_CURRENT_SOURCE_DIR}/cluster_test.py ${DDPSIM_BIN} ${WORK}/cluster)
# Open MPI on the emulated cluster (tests/cluster_mpirun_test.py; docs/emulated-network.md, "MPI on the
# cluster of hosts"): `network ... --mpirun` puts rank r on host r (its name and address), MPI's bytes
# cross the shaped links, the failing rank's exit code comes back, and a run killed midway leaves no
# namespace, daemon or rank. About 20 s; skipped where not root.
if(MPI_CXX_FOUND)
  ddpsim_test(NAME network.cluster_mpirun
              REGEX "all passed"
              NEEDS torch netns mpi
              PROPERTIES TIMEOUT 300 RESOURCE_LOCK torch RUN_SERIAL TRUE LABELS measurement
              COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\" \"$2\" \"$3\""
                   ${CMAKE_CURRENT_SOURCE_DIR}/cluster_mpirun_test.py ${DDPSIM_BIN} $<TARGET_FILE:ddpsim-real>
                   ${WORK}/cluster_mpirun)
endif()
# Real DDP on emulated clusters of hosts (tests/torch_cluster.py; docs/validation.md, "On an emulated
# cluster of hosts"): ResNet-18 (cnn) at W = 2, 4 and 8 on one switch of 1 Gbit/s NICs, 2 nodes x 4 hosts
# with a 200 Mbit/s NIC a node, and 4 process groups sharing those NICs; the analytic engine, SimGrid and
# the closed form beside each measurement (about 7 minutes at CI's 10 steps a run, the script's default
# 12; CI's whole run was at its 45-minute aim on 2026-12-07). CI leaves out the script's slow-NIC row
# (--no-slow-rank): oracle.torch_trickle runs a slow link on the same kind of cluster, from mid-run. The targets are printed, met or
# not (measurements on a shared machine: reported, not gated); the test fails on a broken pipeline.
ddpsim_test(NAME oracle.torch_cluster
            NEEDS torch netns
            PROPERTIES TIMEOUT 1500 RESOURCE_LOCK torch RUN_SERIAL TRUE LABELS measurement
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\" \"$2\" --recipes cnn --no-slow-rank --steps 10"
                 ${CMAKE_CURRENT_SOURCE_DIR}/torch_cluster.py ${DDPSIM_BIN} ${WORK}/torch_cluster)
# The same on an emulated cluster network (docs/emulated-network.md; tests/torch_ddp_network.py): each
# rank a host behind a 1 Gbit/s link, in a network namespace the test makes (root); skipped where none
# can be made. The CI subset: ResNet-18 (cnn) and the embedding recipe at 1 Gbit/s, bucket caps 1 and
# 25 MB, one alternation, and cnn with rank 1's link at a quarter (about 3 minutes); the full matrix is
# scripts/validate_network.sh. The targets are printed, met or not (measurements: reported, not gated);
# the test fails on a broken pipeline.
ddpsim_test(NAME oracle.torch_ddp_network
            NEEDS torch netns
            PROPERTIES TIMEOUT 900 RESOURCE_LOCK torch RUN_SERIAL TRUE
                     LABELS measurement ENVIRONMENT "DDPSIM_NETBIND=$<TARGET_FILE:ddpsim_netbind>"
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\" \"$2\" --recipes cnn,embedding --rates 1gbit --alternations 1 --slow-rank"
                 ${CMAKE_CURRENT_SOURCE_DIR}/torch_ddp_network.py ${DDPSIM_BIN} ${WORK}/torch_ddp_network)
# DDP's communication hooks against PyTorch's own (tests/torch_comm_hooks.py): ResNet-18 (cnn) and the
# embedding recipe at 1 Gbit/s under allreduce, fp16_compress and powerSGD at rank 1 and 4 (one bucket,
# which PowerSGD on gloo needs), PowerSGD starting inside the measured steps (about 3 minutes). The
# speed-up targets are printed, met or not (measurements: reported, not gated; docs/validation.md); the
# test fails on a broken pipeline.
ddpsim_test(NAME oracle.torch_comm_hooks
            NEEDS torch netns
            PROPERTIES TIMEOUT 600 RESOURCE_LOCK torch RUN_SERIAL TRUE
                     LABELS measurement ENVIRONMENT "DDPSIM_NETBIND=$<TARGET_FILE:ddpsim_netbind>"
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\" \"$2\" --recipes cnn,embedding"
                 ${CMAKE_CURRENT_SOURCE_DIR}/torch_comm_hooks.py ${DDPSIM_BIN} ${WORK}/torch_comm_hooks)
# profile --device cuda without a GPU: a clear error and exit 2 (skipped where torch is missing or sees a GPU).
ddpsim_test(NAME oracle.torch_profile_no_cuda
            RC 2
            REGEX "--device cuda: torch sees no CUDA device here"
            NEEDS torch
            COMMAND sh -c "${DDPSIM_PYTHON} -c 'import torch, sys; sys.exit(77 if torch.cuda.is_available() else 0)' || exit 77; \
PYTHONPATH=\"$0\" ${DDPSIM_PYTHON} -m ddpsim_torch profile \"$1\" --device cuda --out \"$2\""
                 ${PROJECT_SOURCE_DIR}/python ${PROJECT_SOURCE_DIR}/python/recipes/mlp.py ${WORK}/no_cuda.yaml)
# profile --ranks-per-host 2: a second process trains the recipe while the profile measures; the
# scenario's header counts its steps (none counted: the co-runner never ran; '.' stands for the
# header's ';', which would split the regex into two). Refused with --device cuda.
ddpsim_test(NAME oracle.torch_profile_ranks_per_host
            REGEX "# Measured with 1 other process\\(es\\) training the recipe beside it \\(--ranks-per-host 2. [1-9][0-9]* steps of theirs meanwhile\\)"
            NEEDS torch
            PROPERTIES RESOURCE_LOCK torch
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] && ${DDPSIM_PYTHON} -c 'import torch' 2>/dev/null || exit 77; \
PYTHONPATH=\"$0\" ${DDPSIM_PYTHON} -m ddpsim_torch profile \"$1\" --ranks-per-host 2 --steps 20 --warmup 2 --bare \
--out \"$2\" >/dev/null && head -3 \"$2\""
                 ${PROJECT_SOURCE_DIR}/python ${PROJECT_SOURCE_DIR}/python/recipes/mlp.py ${WORK}/ranks_per_host.yaml)
ddpsim_test(NAME oracle.torch_profile_ranks_per_host_cuda
            RC 2
            REGEX "--ranks-per-host 2: for --device cpu only \\(a GPU rank owns its device\\)"
            NEEDS torch
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] && ${DDPSIM_PYTHON} -c 'import torch' 2>/dev/null || exit 77; \
PYTHONPATH=\"$0\" ${DDPSIM_PYTHON} -m ddpsim_torch profile \"$1\" --device cuda --ranks-per-host 2 --out \"$2\""
                 ${PROJECT_SOURCE_DIR}/python ${PROJECT_SOURCE_DIR}/python/recipes/mlp.py ${WORK}/ranks_per_host_cuda.yaml)
# ddpsim_torch sweep (2 gloo processes) read back by ddpsim calibrate (tests/torch_sweep.sh).
ddpsim_test(NAME oracle.torch_sweep
            REGEX "least squares over 20 points.*\ncollective:\n.*fit agrees with ddpsim calibrate"
            NEEDS torch
            PROPERTIES TIMEOUT 300 RESOURCE_LOCK torch LABELS measurement
            COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/torch_sweep.sh ${DDPSIM_BIN} ${WORK}/torch_sweep)

# A link that slows to a trickle in the middle of a real run (tests/torch_trickle.py; docs/validation.md,
# "A link that slows mid-run"): the example torchrun script on 4 emulated hosts of 200 Mbit/s, rank 1's
# link at a quarter in step 3, predicted with the slow_link fault's at_ms placed by the log's clock and
# by the step, beside the link slow from the start, never slow, and the closed form. CI's run stops
# after 6 steps (about 60 s; the documented runs are 8, the script's default).
# The 10 % target is printed, met or not (a measurement: reported, not gated); the test fails on a
# broken pipeline.
ddpsim_test(NAME oracle.torch_trickle
            REGEX "target: mid-run, by the step, within 10 %: (met|not met)"
            NEEDS torch netns
            PROPERTIES TIMEOUT 600 RESOURCE_LOCK torch RUN_SERIAL TRUE LABELS measurement
            COMMAND sh -c "[ -x ${DDPSIM_PYTHON} ] || { echo 'SKIPPED: no ${DDPSIM_PYTHON}'; exit 77; }; exec ${DDPSIM_PYTHON} \"$0\" \"$1\" \"$2\" --steps 6"
                 ${CMAKE_CURRENT_SOURCE_DIR}/torch_trickle.py ${DDPSIM_BIN} ${WORK}/torch_trickle)
