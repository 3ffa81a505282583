"""environment.yml stays in step with pyproject.toml, .ci/run runs the README's test command, and
docs/parameters.md holds the generated parameter tables."""

import re
import tomllib

from conftest import REPO


def _requirements():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for name, extra in project["optional-dependencies"].items():
        reqs += [r for r in extra if not r.startswith("fedlib")]
    return sorted(reqs)


def test_environment_yml_pins_match_pyproject():
    lines = (REPO / "environment.yml").read_text().splitlines()
    pinned = sorted(m.group(1) for line in lines if (m := re.match(r" {6}- ([A-Za-z][\w-]*(?:\[[\w,-]+\])?[<>=!].*)$", line)))
    assert pinned == _requirements()


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    match = re.search(r"<!-- test-command -->\s*```(?:bash|sh)?\n(.+?)\n```", readme, re.S)
    assert match, "README.md must mark its test command with <!-- test-command -->"
    command = match.group(1).strip()
    ci = (REPO / ".ci" / "run").read_text()
    assert command in ci


PARAMETERS_PAGE = REPO / "docs" / "parameters.md"


def test_parameters_page_documents_every_parameter():
    from dataclasses import fields

    from fedlib import Config

    page = PARAMETERS_PAGE.read_text()
    missing = [f.name for f in fields(Config) if f"`{f.name}`" not in page]
    assert not missing, f"parameters missing from docs/parameters.md: {missing}"


def test_parameters_page_tables_are_the_generated_ones():
    """docs/parameters.md's tables are `python -m fedlib params --markdown`, verbatim (`make docs-params`)."""
    from fedlib.__main__ import parameter_tables

    page = PARAMETERS_PAGE.read_text()
    block = re.search(r"<!-- params:begin -->\n(.*?)\n<!-- params:end -->", page, re.S)
    assert block, "docs/parameters.md must hold the parameter tables between <!-- params:begin/end -->"
    assert block.group(1).strip() == parameter_tables().strip(), \
        "docs/parameters.md's tables are stale: run `make docs-params`"
