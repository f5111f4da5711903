"""JupyterLab's server finds the extension's zh_CN catalogue the way it finds any extension's."""

from __future__ import annotations

from jupyterlab_server.translation_utils import get_installed_packages_locale, get_language_pack


def test_the_locale_entry_point_serves_the_zh_cn_catalogue() -> None:
    packages, message = get_installed_packages_locale("zh_CN")
    assert message == ""
    catalogue = packages["notebook_bcc"]
    assert catalogue[""]["domain"] == "notebook_bcc"
    assert catalogue[""]["plural_forms"] == "nplurals=1; plural=0;"
    assert catalogue["Run Workflow"] == ["运行工作流"]
    # An engine message (src/engine/messages.ts) with its placeholders kept.
    assert catalogue["The run failed: %1"] == ["运行失败：%1"]


def test_the_page_gets_it_with_the_language_pack() -> None:
    data, _ = get_language_pack("zh_CN")
    assert data["notebook_bcc"]["Completed"] == ["已完成"]
    assert "jupyterlab" in data
