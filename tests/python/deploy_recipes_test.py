"""The multi-host recipes are consistent with each other and with the programs they run.

docker/compose.yaml, docker/k8s/phantora-job.yaml, docker/Dockerfile.rank and
examples/slurm/phantora.sbatch cannot all be run here (no Docker daemon, no
Kubernetes, no Slurm cluster); this checks what can be checked without them:
they parse, every phantora-cluster / phantora-rank option they use is one the
built programs accept (their --help), the ranks add up to the bridge's --nproc,
torchrun's node ranks are 0..N-1 with the rendezvous on node 0, the endpoints and
key folders match, the files the rank layer copies exist in a build, and
phantora-rank reads the Slurm variables the batch script relies on.

usage: deploy_recipes_test.py SOURCE_DIR BUILD_DIR PHANTORA_CLUSTER PHANTORA_RANK
"""

import os
import re
import subprocess
import sys
import unittest

import yaml

SRC, BUILD, CLUSTER, RANK = sys.argv[1:5]
del sys.argv[1:5]


def options_of(program):
    """The --options a program's --help lists."""
    out = subprocess.run([program, "--help"], capture_output=True, text=True, check=True).stdout
    # option lines only ("  --keys DIR  ..."), not the examples of the footer
    return set(re.findall(r"(?m)^\s+(?:-\w,\s*)?(--[a-z][a-z0-9-]*)", out))


CLUSTER_OPTIONS = options_of(CLUSTER)
RANK_OPTIONS = options_of(RANK)
TORCHRUN_OPTIONS = {"--nnodes", "--node_rank", "--nproc_per_node", "--master_addr", "--master_port"}


def split_command(argv):
    """(program options before --, the command after --)."""
    argv = [str(a) for a in argv]
    if "--" not in argv:
        return argv, []
    i = argv.index("--")
    return argv[:i], argv[i + 1:]


def option(argv, name):
    """The value after option \\p name in argv (None if absent)."""
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
    return None


def check_options(test, argv, accepted, program):
    for a in argv:
        if a.startswith("--"):
            test.assertIn(a, accepted, f"{program} has no option {a}")


class Compose(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(SRC, "docker/compose.yaml")) as f:
            self.doc = yaml.safe_load(f)
        self.services = self.doc["services"]

    def test_the_bridge_serves_as_many_ranks_as_the_rank_services_start(self):
        bridge, _ = split_command(self.services["bridge"]["command"])
        self.assertEqual(os.path.basename(bridge[0]), "phantora-cluster")
        check_options(self, bridge[1:], CLUSTER_OPTIONS, "phantora-cluster")
        self.assertIn("--serve", bridge)
        port = option(bridge, "--listen").rsplit(":", 1)[1]
        ranks = {n: s for n, s in self.services.items() if n.startswith("rank")}
        self.assertGreaterEqual(len(ranks), 2)
        total = 0
        node_ranks = []
        masters = set()
        for name, s in ranks.items():
            self.assertEqual(s["image"], "phantora-rank", name)
            self.assertIn("keys:/keys:ro", s["volumes"], name)
            wrapper, cmd = split_command(s["command"])
            check_options(self, wrapper, RANK_OPTIONS, "phantora-rank")
            self.assertEqual(option(wrapper, "--connect"), f"tcp://bridge:{port}", name)
            self.assertEqual(option(wrapper, "--keys"), "/keys", name)
            self.assertEqual(cmd[0], "torchrun", name)
            self.assertEqual(int(option(cmd, "--nnodes")), len(ranks), name)
            node_ranks.append(int(option(cmd, "--node_rank")))
            total += int(option(cmd, "--nproc_per_node"))
            masters.add(option(cmd, "--master_addr"))
            if node_ranks[-1] == 0:
                rendezvous_host = s["hostname"]
        self.assertEqual(sorted(node_ranks), list(range(len(ranks))))
        self.assertEqual(total, int(option(bridge, "--nproc")))
        self.assertEqual(masters, {rendezvous_host})

    def test_the_keys_exist_before_the_bridge_and_the_ranks_start(self):
        keys, _ = split_command(self.services["keys"]["command"])
        check_options(self, keys[1:], CLUSTER_OPTIONS, "phantora-cluster")
        self.assertEqual(option(keys, "--make-keys"), "/keys")
        for name in ("bridge", "rank0", "rank1"):
            dep = self.services[name]["depends_on"]["keys"]
            self.assertEqual(dep["condition"], "service_completed_successfully", name)


class Kubernetes(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(SRC, "docker/k8s/phantora-job.yaml")) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        self.by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
        for d in docs:
            self.assertIn(d["apiVersion"], ("v1", "batch/v1"))

    def test_the_indexed_job_matches_the_bridge_and_its_services(self):
        bridge_job = self.by[("Job", "phantora-bridge")]
        ranks_job = self.by[("Job", "phantora-ranks")]
        bridge_svc = self.by[("Service", "phantora-bridge")]
        ranks_svc = self.by[("Service", "phantora-ranks")]
        bridge_pod = bridge_job["spec"]["template"]
        bridge, _ = split_command(bridge_pod["spec"]["containers"][0]["command"])
        check_options(self, bridge[1:], CLUSTER_OPTIONS, "phantora-cluster")
        port = int(option(bridge, "--listen").rsplit(":", 1)[1])
        self.assertEqual(bridge_svc["spec"]["ports"][0]["targetPort"], port)
        self.assertEqual(bridge_svc["spec"]["selector"], bridge_pod["metadata"]["labels"])

        spec = ranks_job["spec"]
        self.assertEqual(spec["completionMode"], "Indexed")
        self.assertEqual(spec["completions"], spec["parallelism"])
        pod = spec["template"]
        self.assertEqual(ranks_svc["spec"]["clusterIP"], "None")
        self.assertEqual(pod["spec"]["subdomain"], ranks_svc["metadata"]["name"])
        self.assertEqual(ranks_svc["spec"]["selector"], pod["metadata"]["labels"])
        container = pod["spec"]["containers"][0]
        line = container["command"][-1].split()
        self.assertEqual(line[0], "exec")
        wrapper, cmd = split_command(line[1:])
        self.assertTrue(wrapper[0].endswith("/phantora-rank"))
        check_options(self, wrapper[1:], RANK_OPTIONS, "phantora-rank")
        self.assertEqual(option(wrapper, "--connect"),
                         f"tcp://{bridge_svc['metadata']['name']}:{bridge_svc['spec']['ports'][0]['port']}")
        self.assertEqual(cmd[0], "torchrun")
        self.assertEqual(int(option(cmd, "--nnodes")), spec["completions"])
        self.assertEqual(option(cmd, "--node_rank"), '"$JOB_COMPLETION_INDEX"')
        self.assertEqual(spec["completions"] * int(option(cmd, "--nproc_per_node")),
                         int(option(bridge, "--nproc")))
        self.assertEqual(option(cmd, "--master_addr"),
                         f"{ranks_job['metadata']['name']}-0.{ranks_svc['metadata']['name']}")
        # one key Secret, mounted where both sides look
        for p in (bridge_pod, pod):
            mount = p["spec"]["containers"][0]["volumeMounts"][0]
            self.assertEqual(mount["mountPath"], "/keys")
            self.assertEqual(p["spec"]["volumes"][0]["secret"]["secretName"], "phantora-keys")


class RankLayer(unittest.TestCase):
    def test_the_layer_copies_files_that_a_build_makes_and_enters_through_phantora_rank(self):
        with open(os.path.join(SRC, "docker/Dockerfile.rank")) as f:
            text = f.read()
        self.assertEqual(len(re.findall(r"^FROM ", text, re.M)), 2)
        self.assertIn("FROM ${TRAINING_IMAGE}", text)
        # docker/Dockerfile builds in /phantora with the default build folder
        for path in re.findall(r"cp (build/\S+|examples/\S+)", text):
            if path.startswith("build/"):
                self.assertTrue(os.path.exists(os.path.join(BUILD, path[len("build/"):])), path)
            else:
                self.assertTrue(os.path.exists(os.path.join(SRC, path)), path)
        entry = re.search(r'^ENTRYPOINT (\[.*\])$', text, re.M)
        self.assertIsNotNone(entry)
        argv = yaml.safe_load(entry.group(1))
        self.assertTrue(argv[0].endswith("/phantora-rank"))
        check_options(self, argv[1:], RANK_OPTIONS, "phantora-rank")


class Slurm(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(SRC, "examples/slurm/phantora.sbatch")
        with open(self.path) as f:
            self.text = f.read()

    def test_the_batch_script_parses_and_uses_only_real_options(self):
        subprocess.run(["bash", "-n", self.path], check=True)
        self.assertRegex(self.text, r"(?m)^#SBATCH --nodes=")
        joined = self.text.replace("\\\n", " ")
        cluster = re.search(r'"\$BUILD/bridge/phantora-cluster" (--scenario[^&\n]*)', joined)
        rank = re.search(r'srun [^\n]*"\$BUILD/bridge/phantora-rank" ([^\n]*)', joined)
        self.assertIsNotNone(cluster)
        self.assertIsNotNone(rank)
        check_options(self, split_command(cluster.group(1).split())[0], CLUSTER_OPTIONS,
                      "phantora-cluster")
        check_options(self, split_command(rank.group(1).split())[0], RANK_OPTIONS,
                      "phantora-rank")
        self.assertIn('--nproc "$SLURM_NTASKS"', joined)

    def test_phantora_rank_takes_its_identity_from_the_variables_srun_sets(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RANK", "WORLD_SIZE",
                                                                           "LOCAL_"))}
        env.update(SLURM_PROCID="5", SLURM_NTASKS="8", SLURM_LOCALID="1",
                   SLURM_NTASKS_PER_NODE="4")
        # No bridge listens there: the command runs all the same, and phantora-rank
        # ends with its status once its exit report has gone unanswered.
        out = subprocess.run(
            [RANK, "--connect", "tcp://127.0.0.1:9", "--", "sh", "-c",
             'echo "$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE"; '
             'echo "$LD_PRELOAD"; echo "$PHANTORA_SUPERVISOR"'],
            env=env, capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertEqual(lines[0], "5 8 1 4")
        self.assertIn("libphantora_interposer.so", lines[1])
        self.assertRegex(lines[2], r"^.+:[0-9]+$")


if __name__ == "__main__":
    unittest.main(verbosity=2)
