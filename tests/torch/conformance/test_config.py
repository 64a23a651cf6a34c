"""The settings registry from Python: every VKML_* setting rejects bad values with a ValueError naming
it, overrides restore value and source, a bad environment value fails the import, and
docs/configuration.md is what the registry generates."""

import os
import pathlib
import subprocess
import sys

import pytest

import torch_vkml

ROOT = pathlib.Path(__file__).resolve().parents[3]

# Values each kind must reject (Int and Bytes: also past their range).
BAD = {
    "Bool": ["2", "yes", "on"],
    "Int": ["abc", "1.5", "-2", "99999999999999999999999"],
    "Bytes": ["abc", "12Q", "-1"],
    "Enum": ["bogus"],
    "List": ["a", "1,,2"],
    "Tile": ["1x", "0x0x0x0x0", "1x2x3x4x5x6x7x8"],
    "Set": ["bogus", "forward,bogus"],
    "Text": [],
}

ENTRIES = torch_vkml.config.entries()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_every_setting_rejects_bad_values_by_name(entry):
    def state():
        e = next(e for e in torch_vkml.config.entries() if e["name"] == entry["name"])
        return e["value"], e["source"]

    before = state()  # now, not at collection: another module may have set it since
    bad = BAD[entry["kind"]]
    assert bad or entry["kind"] == "Text"
    for value in bad:
        with pytest.raises(ValueError, match=f"{entry['name']}='{value}' is not valid: expected"):
            with torch_vkml.config.override(**{entry["name"]: value}):
                pass
    assert state() == before
    # The default is always accepted, and the override is undone afterwards.
    with torch_vkml.config.override(**{entry["name"]: entry["default"] or None}):
        assert torch_vkml.config.source(entry["name"]) in ("default", "override")
    assert state() == before


def test_out_of_range_numbers_are_errors():
    with pytest.raises(ValueError, match="VKML_PROFILE='3'.*from 0 to 2"):
        torch_vkml.config.set("VKML_PROFILE", 3)
    with pytest.raises(ValueError, match="VKML_BATCH_SIZE='0'"):
        torch_vkml.config.set("VKML_BATCH_SIZE", 0)


def test_override_restores_value_and_source():
    assert torch_vkml.config.source("VKML_EW_SPREAD") == "default"
    with torch_vkml.config.override(VKML_EW_SPREAD=7, VKML_NORM_FAST=False):
        assert torch_vkml.config.get("VKML_EW_SPREAD") == "7"
        assert torch_vkml.config.get("VKML_NORM_FAST") == "0"
        assert torch_vkml.config.source("VKML_EW_SPREAD") == "override"
    assert torch_vkml.config.get("VKML_EW_SPREAD") == "2048"
    assert torch_vkml.config.source("VKML_EW_SPREAD") == "default"
    with pytest.raises(ValueError, match="unknown setting 'VKML_NO_SUCH'"):
        with torch_vkml.config.override(VKML_NO_SUCH=1):
            pass


def test_bad_environment_value_fails_the_import_naming_it():
    env = dict(os.environ, VKML_FALLBACK="eror", PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", "import torch_vkml"], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode != 0
    assert "ValueError" in r.stderr and "VKML_FALLBACK='eror'" in r.stderr
    assert "warn, silent, error" in r.stderr


def test_environment_values_are_read_once_with_their_source():
    env = dict(os.environ, VKML_EW_SPREAD="16", PYTHONPATH=str(ROOT))
    code = ("import torch_vkml as t; print(t.config.get('VKML_EW_SPREAD'), "
            "t.config.source('VKML_EW_SPREAD'))")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["16", "environment"]


def test_configuration_doc_is_generated_from_the_registry():
    doc = (ROOT / "docs" / "configuration.md").read_text()
    assert doc == torch_vkml.config.markdown(), (
        "docs/configuration.md is stale: regenerate it with `make docs`")


def test_vkml_info_lists_every_setting_with_its_source():
    # `make build` builds into build/, scripts/gpu_check.sh into build-gpu/.
    built = [ROOT / d / "vkml-info" for d in ("build", "build-gpu")]
    built = [p for p in built if p.exists()]
    assert built, "vkml-info is built with the extension (make build)"
    info = max(built, key=lambda p: p.stat().st_mtime)
    r = subprocess.run([str(info), "--config"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, VKML_BATCH_SIZE="32"))
    assert r.returncode == 0, r.stderr
    lines = {line.split("=")[0]: line for line in r.stdout.splitlines()}
    assert set(lines) == {e["name"] for e in ENTRIES}
    assert lines["VKML_BATCH_SIZE"].startswith("VKML_BATCH_SIZE=32  (environment")
