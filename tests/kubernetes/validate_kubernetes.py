#!/usr/bin/env python3
"""The Kubernetes pieces of cudatool check: docs/kubernetes/cudatool-daemonset.yaml is valid
YAML, a DaemonSet whose container runs `cudatool check --format nfd` into the directory of
Node Feature Discovery's local source that it mounts from the host; and the feature file
cudatool writes (run here with the fake driver and NVML, on a passing and a failing node and
one without a driver) is the local source's format: comment lines and name=value lines, each
name and value a valid Kubernetes label part, NFD's prefix making a valid label key.

Usage: validate_kubernetes.py CUDATOOL FAKE_LIBCUDA FAKE_LIBNVML SOURCE_DIR
Exit 77 (skipped) where python3-yaml is missing."""
import os
import re
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("python3-yaml is not installed: skipped")
    sys.exit(77)

cudatool, fake_libcuda, fake_libnvml, source_dir = sys.argv[1:5]
problems = []
FEATURES_D = "/etc/kubernetes/node-feature-discovery/features.d"

# ---- the DaemonSet -------------------------------------------------------------------------
path = os.path.join(source_dir, "docs", "kubernetes", "cudatool-daemonset.yaml")
docs = [d for d in yaml.safe_load_all(open(path, encoding="utf-8")) if d is not None]
if len(docs) != 1:
    problems.append(f"{path}: {len(docs)} documents, expected one DaemonSet")
ds = docs[0] if docs else {}
if ds.get("apiVersion") != "apps/v1" or ds.get("kind") != "DaemonSet":
    problems.append(f"not an apps/v1 DaemonSet: {ds.get('apiVersion')} {ds.get('kind')}")
spec = ds.get("spec", {})
template = spec.get("template", {})
if spec.get("selector", {}).get("matchLabels", {}).items() - template.get("metadata", {}).get("labels", {}).items():
    problems.append("the selector does not match the pod template's labels")
pod = template.get("spec", {})
containers = pod.get("containers", [])
if len(containers) != 1:
    problems.append("expected one container")
container = containers[0] if containers else {}
script = " ".join(container.get("command", []) + container.get("args", []))
if "cudatool check" not in script or "--format nfd" not in script:
    problems.append("the container does not run cudatool check --format nfd")
mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}
volumes = {v["name"]: v for v in pod.get("volumes", [])}
if mounts.get("features-d") != FEATURES_D or volumes.get("features-d", {}).get("hostPath", {}).get("path") != FEATURES_D:
    problems.append(f"the host's {FEATURES_D} is not mounted at the same path")
if FEATURES_D not in script:
    problems.append(f"the script does not write into {FEATURES_D}")
if "mv -f" not in script:
    problems.append("the feature file is not renamed into place (NFD could read half a file)")
for name, volume in volumes.items():
    if name not in mounts:
        problems.append(f"volume {name} is not mounted")
# The container's script, run here (with the fake cudatool and a temporary features.d, one
# round): it leaves exactly the feature file.
with tempfile.TemporaryDirectory() as tmp:
    features = os.path.join(tmp, "features.d")
    bindir = os.path.join(tmp, "bin")
    os.makedirs(features)
    os.makedirs(bindir)
    os.symlink(os.path.abspath(cudatool), os.path.join(bindir, "cudatool"))
    body = container.get("args", [""])[0].replace(FEATURES_D, features).replace("sleep 300", "break")
    env = {"PATH": bindir + ":/usr/bin:/bin", "CUDATOOL_LIBCUDA": fake_libcuda,
           "CUDATOOL_LIBNVML": fake_libnvml, "CUDATOOL_TEST_KMSG": os.path.join(tmp, "none"),
           "CUDATOOL_TEST_JOURNALCTL": os.path.join(tmp, "none")}
    run = subprocess.run(["/bin/sh", "-c", body], env=env, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        problems.append(f"the container's script failed: {run.stderr.strip()}")
    if sorted(os.listdir(features)) != ["cudatool"]:
        problems.append(f"features.d holds {sorted(os.listdir(features))}, expected only cudatool")

# ---- the feature file ------------------------------------------------------------------------
NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")  # a label name, <= 63
VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")  # a label value, <= 63


def features(env_extra, expected_exit):
    env = dict(os.environ)
    for key in ("CUDATOOL_LIBCUDA", "CUDATOOL_LIBNVML", "CUDATOOL_NO_NVML", "CUDA_VISIBLE_DEVICES"):
        env.pop(key, None)
    env.update(env_extra)
    tmp = tempfile.mkdtemp()
    env["CUDATOOL_TEST_KMSG"] = os.path.join(tmp, "kmsg")
    with open(env["CUDATOOL_TEST_KMSG"], "w") as f:
        f.write("6,1,1,-;Linux version 6.1.0\n")
    run = subprocess.run([cudatool, "check", "--only", "identity,health,xid", "--format", "nfd"],
                         env=env, capture_output=True, text=True, timeout=120)
    if run.returncode != expected_exit:
        problems.append(f"{env_extra}: exit {run.returncode}, expected {expected_exit}: {run.stderr}")
    found = {}
    for line in run.stdout.splitlines():
        if line.startswith("#") or not line:
            continue
        name, sep, value = line.partition("=")
        if not sep or not NAME.match(name) or len(name) > 63:
            problems.append(f"not a feature name: {line!r}")
        key = "feature.node.kubernetes.io/" + name
        if len(key.split("/")[0]) > 253:
            problems.append(f"label prefix too long: {key}")
        if not VALUE.match(value) or len(value) > 63:
            problems.append(f"not a label value: {line!r}")
        if name in found:
            problems.append(f"{name} twice")
        found[name] = value
    return found


passing = features({"CUDATOOL_LIBCUDA": fake_libcuda, "CUDATOOL_LIBNVML": fake_libnvml}, 0)
want = {"cudatool-check.verdict": "warn",  # the fake's two GPUs differ (sm_90, sm_80)
        "cudatool-check.remediation": "monitor", "cudatool-check.up": "true",
        "cudatool-gpu.count": "2", "cudatool-gpu.driver": "999.99.99", "cudatool-gpu.cuda": "13.0",
        "cudatool-gpu.product": "Fake-GPU-0", "cudatool-gpu.compute-capability": "9.0",
        "cudatool-gpu.family": "sm_90", "cudatool-gpu.memory-gib": "80",
        "cudatool-gpu.homogeneous": "false"}
if passing != want:
    problems.append(f"passing node: {passing}, expected {want}")
failing = features({"CUDATOOL_LIBCUDA": fake_libcuda, "CUDATOOL_LIBNVML": fake_libnvml,
                    "FAKE_NVML_LOST": "2"}, 9)
if failing.get("cudatool-check.verdict") != "fail" or failing.get("cudatool-check.remediation") != "reboot_node":
    problems.append(f"failing node: {failing}")
no_driver = features({"CUDATOOL_LIBCUDA": "/nonexistent/libcuda.so.1", "CUDATOOL_NO_NVML": "1"}, 3)
if no_driver != {"cudatool-check.verdict": "fail", "cudatool-check.up": "false", "cudatool-gpu.count": "0"}:
    problems.append(f"node without a driver: {no_driver}")

for p in problems:
    print("FAIL:", p, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"kubernetes: the DaemonSet parses and its script writes features.d/cudatool; "
      f"{len(passing)} NFD features on a passing node, the failing node labelled fail/reboot_node")
