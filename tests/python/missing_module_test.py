"""The advice after a rank's ModuleNotFoundError (python/phantora_missing_module.py): the
interpreter's venv and the pip line, the pip name where it differs from the import name, the
./ns3 step for the frameworks the project installs, the project's venv for torch.  No torch
needed."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import phantora_missing_module as advice_module  # noqa: E402

VENV = "/repo/build/venv"
PY = VENV + "/bin/python"


def advice(missing, prefix=VENV, base="/usr", project=VENV, executable=PY):
    return "\n".join(advice_module.advice(missing, executable=executable, prefix=prefix,
                                          base_prefix=base, project_venv=project))


class Advice(unittest.TestCase):
    def test_a_package_names_the_venv_and_the_pip_line(self):
        text = advice("einops")
        self.assertIn("no module named 'einops' for this rank's Python (the virtual "
                      "environment /repo/build/venv)", text)
        self.assertIn(f"{PY} -m pip install einops", text)

    def test_the_pip_name_of_a_module_that_installs_under_another(self):
        self.assertIn("-m pip install pyyaml", advice("yaml"))
        self.assertIn("-m pip install megatron-core", advice("megatron.core", prefix="/other",
                                                             executable="/other/bin/python"))

    def test_a_framework_missing_from_the_projects_venv_names_the_ns3_step(self):
        text = advice("deepspeed")
        self.assertIn("./ns3 build --frameworks", text)
        self.assertNotIn("pip install", text)

    def test_torch_missing_from_another_interpreter_names_the_projects_venv(self):
        text = advice("torch", prefix="/usr", base="/usr", executable="/usr/bin/python3")
        self.assertIn("/usr/bin/python3, which is not a virtual environment", text)
        self.assertIn(f"run the program with {PY}", text)


if __name__ == "__main__":
    unittest.main()
