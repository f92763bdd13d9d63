# Sphinx configuration of the documentation site (`./ns3 docs`). The site's source is the
# whole repository, not this folder alone, so that the folder READMEs it links to are pages
# of it and every relative link between them is checked: this folder holds the user's guide
# (index.md and one page per subject), the folders' own READMEs are the reference.
import os
import re

project = "Phantora-C++"
author = "The Phantora-C++ developers"
copyright = "2026, " + author

extensions = ["myst_parser"]
root_doc = "docs/index"
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# What is not documentation: build trees, caches, third-party text, the device's raw data
# (lab notes stay with their data: data/README.md is the index)
exclude_patterns = [
    "build", "build-*", ".git", ".ci", "**/__pycache__", ".whl-device", "**/node_modules",
    "tests/data/**",
]
# `[x](../foo/README.md#a-heading)`: MyST makes an anchor for every heading down to ####
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
# The READMEs begin with their own '#' title and may step from '##' to '####'; that is a
# style they keep for GitHub, not an error of the site
suppress_warnings = ["myst.header"]
html_theme = "alabaster"
html_title = project
html_theme_options = {"description": "a GPU-cluster simulator for ML training",
                      "fixed_sidebar": True}
# A link to a source file (a script, a scenario, a header) is a download of that file
# beside the page; a link to a folder is not a page and is left as written
nitpicky = False


_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


def _folder_links(app, docname, source):
    """A link to a folder (the READMEs point at raw-data folders and source folders) is a
    link to the folder's README where it has one, else the folder's path as plain text: a
    site has no page for a folder."""
    base = os.path.dirname(os.path.join(app.srcdir, docname))

    def fix(m):
        text, target = m.group(1), m.group(2)
        path, _, anchor = target.partition("#")
        if not path or re.match(r"^[a-z]+:", path):
            return m.group(0)
        full = os.path.normpath(os.path.join(base, path))
        if not os.path.isdir(full):
            return m.group(0)
        if os.path.isfile(os.path.join(full, "README.md")):
            return f"[{text}]({path.rstrip('/')}/README.md{'#' + anchor if anchor else ''})"
        return text

    source[0] = _LINK.sub(fix, source[0])


def setup(app):
    app.connect("source-read", _folder_links)
