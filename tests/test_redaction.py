"""What a run writes is masked and encodable wherever it goes: the report, the exception Allure reads, attachments."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from nylorun_a2a_kit.fixtures.client import redaction
from nylorun_a2a_kit.fixtures.plugin import deciding, labels

SECRET = "kit-redaction-secret-7f3a"


@pytest.fixture(autouse=True)
def hidden_secret():
    redaction.hide(SECRET)


def test_clean_masks_credentials_and_escapes_lone_surrogates():
    cleaned = redaction.clean(f"key {SECRET} body \ud800 end")
    assert SECRET not in cleaned and redaction.MASK in cleaned
    assert cleaned.encode("utf-8") and "\\ud800" in cleaned


def test_a_failed_checks_exception_message_is_cleaned_for_allure():
    try:
        pytest.fail(f"the target answered {SECRET} and \ud800")
    except pytest.fail.Exception as exc:
        raised = exc
    report = SimpleNamespace(longrepr=None, sections=[], user_properties=[])
    deciding._cleaned(report, SimpleNamespace(excinfo=SimpleNamespace(value=raised)))
    assert SECRET not in str(raised) and str(raised).encode("utf-8")


def test_attachments_are_cleaned(monkeypatch):
    attached = []
    monkeypatch.setattr(labels.allure, "attach", lambda text, **kw: attached.append(text))
    labels.attach_text("A2A exchanges", f"{SECRET} \ud800")
    assert attached and SECRET not in attached[0] and attached[0].encode("utf-8")
