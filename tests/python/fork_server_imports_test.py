"""What the fork server preloads for +imports (python/phantora_fork_server.py): the absolute
imports among a program's top-level statements, with try/except and if blocks, and nothing
from inside functions or relative imports.  No torch needed."""

import os
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import phantora_fork_server as server  # noqa: E402


class ProgramImports(unittest.TestCase):
    def imports(self, source):
        return server.program_imports("prog.py", textwrap.dedent(source))

    def test_import_and_from_import_in_order(self):
        self.assertEqual(self.imports("""
            import os, torch.distributed as dist
            from megatron.core import parallel_state, tensor_parallel
            from megatron.core.models.gpt.gpt_model import GPTModel
            from x import *
        """), [("os", ()), ("torch.distributed", ()),
               ("megatron.core", ("parallel_state", "tensor_parallel")),
               ("megatron.core.models.gpt.gpt_model", ("GPTModel",)), ("x", ())])

    def test_try_and_if_blocks_are_looked_into(self):
        self.assertEqual(self.imports("""
            try:
                import apex
            except ImportError:
                apex = None
            if sys.version_info >= (3, 12):
                import tomllib
            else:
                import tomli
        """), [("apex", ()), ("tomllib", ()), ("tomli", ())])

    def test_functions_classes_and_relative_imports_are_left_to_the_program(self):
        self.assertEqual(self.imports("""
            from . import sibling
            from .pkg import thing
            def main():
                import deepspeed
            class A:
                import json
            import os
        """), [("os", ())])

    def test_a_syntax_error_names_the_file(self):
        with self.assertRaises(SyntaxError) as e:
            self.imports("import (\n")
        self.assertEqual(e.exception.filename, "prog.py")


class PreloadingThem(unittest.TestCase):
    def test_the_programs_folder_is_on_the_path_and_a_failing_import_is_left(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "fork_probe_helper_mod.py"), "w") as f:
                f.write("VALUE = 7\n")
            with open(os.path.join(d, "prog.py"), "w") as f:
                f.write("import fork_probe_helper_mod\nimport no_such_module_anywhere\n"
                        "from json import dumps\n")
            calls = []
            imported, left = server._import_program_imports(  # noqa: SLF001
                [os.path.join(d, "prog.py"), "--flag"], lambda: calls.append(1))
            self.assertEqual(imported, ["fork_probe_helper_mod", "json"])
            self.assertEqual([m for m, _ in left], ["no_such_module_anywhere"])
            self.assertIn("ModuleNotFoundError", left[0][1])
            self.assertEqual(len(calls), 2)
            self.assertEqual(sys.modules["fork_probe_helper_mod"].VALUE, 7)
            self.assertNotIn(d, sys.path)  # the server's own path is back

    def test_dash_m_reads_the_modules_source(self):
        path, source = server._program_source(["-m", "json.tool", "x"])  # noqa: SLF001
        self.assertTrue(path.endswith(os.path.join("json", "tool.py")))
        self.assertIn(("argparse", ()), server.program_imports(path, source))


if __name__ == "__main__":
    unittest.main()
