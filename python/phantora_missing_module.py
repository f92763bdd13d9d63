"""A rank that ends on an import of a package its Python lacks says where to install it.

sitecustomize.py installs this in every rank phantora-cluster starts (exec'd or forked:
the fork server's hook is inherited): after the usual traceback, one paragraph naming the
interpreter, its virtual environment and the pip line, or, for the frameworks the project
installs itself, the ./ns3 step that does."""

import os
import sys

# Import name -> what pip installs under another name.
_PIP_NAMES = {
    "megatron": "megatron-core",
    "yaml": "pyyaml",
    "PIL": "pillow",
    "sklearn": "scikit-learn",
    "cv2": "opencv-python",
    "google.protobuf": "protobuf",
}
# The frameworks cmake/TorchVenv.cmake installs into the project's venv at their pinned
# versions (`./ns3 build --frameworks`).
_FRAMEWORKS = {"megatron", "deepspeed", "torchtitan", "triton"}


def advice(missing, executable=None, prefix=None, base_prefix=None, project_venv=None):
    """The lines that say how to get module \\p missing for this interpreter."""
    executable = executable or sys.executable
    prefix = prefix or sys.prefix
    base_prefix = base_prefix or sys.base_prefix
    project_venv = project_venv if project_venv is not None else os.environ.get(
        "PHANTORA_PROJECT_VENV", "")
    top = missing.split(".")[0]
    package = _PIP_NAMES.get(missing) or _PIP_NAMES.get(top) or top
    in_venv = prefix != base_prefix
    where = (f"the virtual environment {prefix}" if in_venv
             else f"{executable}, which is not a virtual environment")
    lines = [f"phantora: no module named '{missing}' for this rank's Python ({where})."]
    is_project_venv = bool(project_venv) and os.path.realpath(prefix) == os.path.realpath(
        project_venv)
    if top == "torch" and not is_project_venv and project_venv:
        lines.append(f"  The project's venv has torch: run the program with "
                     f"{os.path.join(project_venv, 'bin', 'python')} (./ns3 build makes it).")
        return lines
    if top in _FRAMEWORKS and is_project_venv:
        lines.append("  The project installs the frameworks (Megatron-core, DeepSpeed, "
                     "TorchTitan, triton) at their tested versions with: ./ns3 build --frameworks")
        return lines
    lines.append(f"  Install it there: {executable} -m pip install {package}")
    return lines


def _hook(previous):
    def hook(kind, value, tb):
        previous(kind, value, tb)
        if isinstance(value, ModuleNotFoundError) and value.name:
            try:
                print("\n".join(advice(value.name)), file=sys.stderr, flush=True)
            except Exception:  # noqa: BLE001 - advice only: the traceback is out already
                pass

    hook.phantora_missing_module = True
    return hook


def install():
    if not getattr(sys.excepthook, "phantora_missing_module", False):
        sys.excepthook = _hook(sys.excepthook)
