"""The wheel holds what an installed app needs: the library, the app's package with its
assets and server settings, the licence, and the command that starts it."""

from __future__ import annotations

import zipfile

import pytest

from tests.installed import REPO, build_wheel

pytestmark = pytest.mark.slow  # a wheel build: a few seconds


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    with zipfile.ZipFile(build_wheel(tmp_path_factory.mktemp("wheel"))) as archive:
        yield archive


def _dist_info(wheel: zipfile.ZipFile) -> str:
    (folder,) = {name.split("/")[0] for name in wheel.namelist() if name.split("/")[0].endswith(".dist-info")}
    return folder


def test_the_wheel_holds_the_licence_and_says_which_it_is(wheel):
    info = _dist_info(wheel)
    assert wheel.read(f"{info}/licenses/LICENSE") == (REPO / "LICENSE").read_bytes()
    metadata = wheel.read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT\n" in metadata and "License-File: LICENSE\n" in metadata
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n\nCopyright (c) 2026 NCA Explorer developers\n")


def test_the_wheel_holds_every_module_of_the_library_and_the_app(wheel):
    names = set(wheel.namelist())
    for package in ("nca_core", "app_pages"):
        modules = {p.relative_to(REPO).as_posix() for p in (REPO / package).rglob("*.py")}
        assert modules and modules <= names, sorted(modules - names)
    assert "app_pages/main.py" in names  # the script nca-explorer app gives streamlit run
    tops = {name.split("/")[0] for name in names} - {_dist_info(wheel)}
    assert tops == {"nca_core", "app_pages"}  # no tests, benchmarks or docs


def test_the_wheel_holds_the_apps_assets_and_server_settings(wheel):
    for name in ("assets/icon.png", "assets/sample-iris.csv", ".streamlit/config.toml"):
        assert wheel.read(f"app_pages/{name}") == (REPO / "app_pages" / name).read_bytes(), name
    settings = wheel.read("app_pages/.streamlit/config.toml").decode()
    for line in ("maxUploadSize = 50", "enableXsrfProtection = true", 'fileWatcherType = "none"',
                 "websocketPingInterval = 120", "postScriptGC = false", 'primaryColor = "#3a6cd0"'):  # fmt: skip
        assert f"\n{line}\n" in settings, line


def test_the_wheel_installs_the_nca_explorer_command(wheel):
    entry_points = wheel.read(f"{_dist_info(wheel)}/entry_points.txt").decode()
    assert "[console_scripts]\nnca-explorer = nca_core.cli:main\n" in entry_points


def test_a_clone_serves_with_the_packaged_settings():
    """`streamlit run app.py` in a clone reads .streamlit/config.toml beside it: the same file."""
    assert (REPO / ".streamlit" / "config.toml").resolve() == (REPO / "app_pages" / ".streamlit" / "config.toml")
    assert "from app_pages.main import main" in (REPO / "app.py").read_text()
