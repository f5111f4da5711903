"""What the DABench run at 2e3172c showed a small model stuck on, each fixed where a retry did not (issue #40):
a retry that repeats the failed code is asked again at a higher temperature; the run's own variables are not
listed as the kernel's; the load step strips the spaces around column names; an if/else written without its
indentation is indented; indexing a scalar gets a hint that says so."""

from __future__ import annotations

import asyncio
import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from jupyterlab_notebook_bcc.llm_planner.answers import cell_code, indent_bodies
from jupyterlab_notebook_bcc.llm_planner.behaviors import load_actions
from jupyterlab_notebook_bcc.llm_planner.memory import known_now

from .fake_openai import FakeOpenAI, Reply, cell
from .test_llm_planner import ask, observation, service_for
from .test_llm_planner_delivery import Script, behave, start, steps, variables

SUM = "answer = df.groupby('region')['revenue'].sum().idxmax()"


def top_region(*answers: str | Reply) -> Script:
    """A plan of one step that delivers `answer`, a region; then the model's cell answers, in order."""
    return Script(steps(("Top region", [("answer", "label")])), list(answers))


class TestAskedAgainAtTheRetryTemperature:
    def test_code_that_failed_written_again_is_asked_for_once_more_at_the_retry_temperature(self) -> None:
        failing = "answer = df['Region'].mode()[0]"
        traceback = "Traceback (most recent call last):\nKeyError: 'Region'"
        script = top_region(cell("Mode.", failing), cell("Mode again.", failing), cell("The largest sum.", SUM))
        with FakeOpenAI(script) as fake:
            service = service_for(fake, max_tries_per_step=3, temperature=0.2, retry_temperature=0.9)
            run = start(service)
            behave(service, "answer", "top_region", 1, variables(run), [traceback], {}, result="error")
            lines, _judged = behave(service, "answer", "top_region", 2, variables(run), [], {})
            sent = [line["content"] for line in lines if line.get("shot_type") == "action"]
            assert sent == [SUM]
            temperatures = [body["temperature"] for body in fake.requests]
            # The plan, the first cell and the retry at the usual temperature; only the firm ask above it.
            assert temperatures[:-1] == [0.2] * (len(temperatures) - 1)
            assert temperatures[-1] == 0.9
            assert "This exact code failed with:" in fake.requests[-1]["messages"][-1]["content"]

    def test_an_unreadable_cell_answer_is_asked_for_again_at_the_retry_temperature(self) -> None:
        script = top_region('{"explanation": "Sum by region", "code": "answer = df.groupby(',
                            cell("Sum by region.", SUM))
        with FakeOpenAI(script) as fake:
            service = service_for(fake, retry_temperature=0.8)
            run = start(service)
            lines, _judged = behave(service, "answer", "top_region", 1, variables(run), [], {})
            assert [line["content"] for line in lines if line.get("shot_type") == "action"] == [SUM]
            assert [body["temperature"] for body in fake.requests[-2:]] == [0.2, 0.8]


    def test_an_answer_cut_at_max_completion_tokens_says_so_to_the_model_and_in_the_step(self) -> None:
        # "no JSON object in the answer" said nothing of why: the endpoint cut the answer at the token limit.
        cut = Reply(text='{"explanation": "Sum by region", "code": "answer = df.groupby(', finish_reason="length")
        script = top_region(cut, cut)
        with FakeOpenAI(script) as fake:
            service = service_for(fake, max_completion_tokens=300, max_tries_per_step=1)
            run = start(service)
            lines, judged = behave(service, "answer", "top_region", 1, variables(run), [], {})
            why = "the answer was cut at 300 tokens (c.LLMPlanner.max_completion_tokens) before its JSON ended"
            assert f"Your answer could not be read: {why}." in fake.requests[-1]["messages"][-1]["content"]
            assert [line["error"] for line in lines if "error" in line] == [
                f"The model's answer could not be read: {why}"]
            # The step given up says why, where the user reads it.
            assert judged["context_update"]["progress_update"]["focus"].endswith(
                f"the model's answer could not be read ({why}).")


class TestTheKernelsVariables:
    def test_the_runs_own_variables_are_not_listed_as_the_kernels_and_df_is_not_read_again(self) -> None:
        script = top_region(cell("Sum.", SUM))
        with FakeOpenAI(script) as fake:
            service = service_for(fake)
            run = start(service)
            names = variables(run, csv_file_path="sales.csv", data_files=["sales.csv"], by_region="Series(4)")
            asyncio.run(ask(service, "generating", {"observation": observation("answer", "top_region", 1, names)}))
            prompt = list(fake.user_prompts())[-1]
            listed = prompt.rsplit("Variables in the kernel:\n<data>\n", 1)[1].split("</data>", 1)[0]
            assert "- df: DataFrame(12×3)" in listed and "- by_region: Series(4)" in listed
            for run_variable in ("csv_file_path", "data_files", "problem_description", "data_preview"):
                assert run_variable not in listed
            assert "The data is loaded in df already: do not read the file again." in prompt

    def test_a_name_error_lists_the_kernels_names_not_the_runs(self) -> None:
        traceback = "Traceback (most recent call last):\nNameError: name 'csv_file_path' is not defined"
        script = top_region(cell("Load.", "df = pd.read_csv(csv_file_path)\nanswer = df['region'][0]"),
                            cell("Sum.", SUM))
        with FakeOpenAI(script) as fake:
            service = service_for(fake)
            run = start(service)
            names = variables(run, csv_file_path="sales.csv")
            behave(service, "answer", "top_region", 1, names, [traceback], {}, result="error")
            asyncio.run(ask(service, "generating", {"observation": observation(
                "answer", "top_region", 2, names, [traceback])}))
            prompt = list(fake.user_prompts())[-1]
            defined = prompt.split("Defined names:\n<data>\n", 1)[1].split("</data>", 1)[0]
            assert "df" in defined and "csv_file_path" not in defined


    def test_the_firm_ask_after_a_repeat_lists_the_kernels_names_not_the_runs(self) -> None:
        failing = "df = pd.read_csv(csv_file_path)\nanswer = df['region'][0]"
        traceback = "Traceback (most recent call last):\nNameError: name 'csv_file_path' is not defined"
        script = top_region(cell("Load.", failing), cell("Load again.", failing), cell("Sum.", SUM))
        with FakeOpenAI(script) as fake:
            service = service_for(fake, max_tries_per_step=3)
            run = start(service)
            names = variables(run, csv_file_path="sales.csv")
            behave(service, "answer", "top_region", 1, names, [traceback], {}, result="error")
            behave(service, "answer", "top_region", 2, names, [], {})
            firm = fake.requests[-1]["messages"][-1]["content"]
            assert "This exact code failed with:" in firm
            defined = firm.split("Defined names:\n<data>\n", 1)[1].split("</data>", 1)[0]
            assert "df" in defined and "csv_file_path" not in defined


class TestColumnNamesWithSpaces:
    def test_the_load_step_strips_the_spaces_around_column_names_and_prints_the_names_as_stripped(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        (tmp_path / "baro.csv").write_text("DATE TIME, WINDSPEED, DIR,avg. wait time \n2015-01-01,5.1,180,3\n")
        monkeypatch.chdir(tmp_path)
        code = next(action["content"] for action in load_actions(["baro.csv"], "Mean wind speed?")
                    if action.get("shot_type") == "action")
        scope: dict = {}
        printed = io.StringIO()
        with redirect_stdout(printed):
            exec(compile(code, "<load>", "exec"), scope)  # noqa: S102 - the planner's own load cell
        assert list(scope["df"].columns) == ["DATE TIME", "WINDSPEED", "DIR", "avg. wait time"]
        assert float(scope["df"]["WINDSPEED"].mean()) == 5.1
        types = printed.getvalue().split("Columns and types:\n", 1)[1].split("First rows:", 1)[0]
        assert [line.split()[0] for line in types.splitlines()] == ["DATE", "WINDSPEED", "DIR", "avg."]

    def test_the_load_cells_comment_names_no_column_of_another_file_and_speaks_the_tasks_language(self) -> None:
        def comments(task: str) -> list[str]:
            code = next(action["content"] for action in load_actions(["sales.csv"], task)
                        if action.get("shot_type") == "action")
            return [line for line in code.splitlines() if line.startswith("#")]

        # Seen in every notebook of the DABench run: the example of one file (' WINDSPEED') on all of them.
        assert comments("Which region sells most?") == [
            "# Column names without the spaces around them, as one types them."]
        assert comments("哪个地区卖得最多？") == ["# 去掉列名两端的空格，与平时输入的写法一致。"]

    def test_column_names_that_are_not_text_are_kept(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        (tmp_path / "rows.json").write_text('[[1, 2], [3, 4]]')
        monkeypatch.chdir(tmp_path)
        code = load_actions(["rows.json"], "Sum?")[1]["content"]
        scope: dict = {}
        with redirect_stdout(io.StringIO()):
            exec(compile(code, "<load>", "exec"), scope)  # noqa: S102 - the planner's own load cell
        assert list(scope["df"].columns) == [0, 1]


class TestIndentation:
    IF_ELSE = ("r = df['a'].corr(df['b'])\nif r > 0:\nkind = 'positive'\nelif r < 0:\nkind = 'negative'\n"
               "else:\nkind = 'none'\nprint(r)\nprint(kind)")

    def test_an_if_else_written_without_the_indentation_of_its_bodies_is_indented(self) -> None:
        code = cell_code(self.IF_ELSE)
        assert code == ("r = df['a'].corr(df['b'])\nif r > 0:\n    kind = 'positive'\nelif r < 0:\n"
                        "    kind = 'negative'\nelse:\n    kind = 'none'\nprint(r)\nprint(kind)")
        compile(code, "<cell>", "exec")

    def test_nested_headers_are_indented_each_under_the_one_before(self) -> None:
        assert cell_code("for c in cols:\nif c:  # a comment\nprint(c)\nprint('done')") == (
            "for c in cols:\n    if c:  # a comment\n        print(c)\nprint('done')")

    def test_code_that_compiles_or_that_indenting_does_not_mend_is_sent_as_written(self) -> None:
        right = "if x:\n    y = 1\n    z = 2\nprint(y)"
        assert cell_code(right) == right
        broken = "if x:\ny = (1,\nprint(y)"
        assert cell_code(broken) == broken
        # A text line ending in a colon is no header.
        assert indent_bodies("print('ratio:')\nx = 1") == "print('ratio:')\nx = 1"


@pytest.mark.parametrize("line", [
    "IndexError: invalid index to scalar variable.",
    "AttributeError: 'numpy.float64' object has no attribute 'iloc'",
    "AttributeError: 'float' object has no attribute 'values'",
])
def test_indexing_a_single_number_is_told_the_value_is_one_number_already(line: str) -> None:
    hint = known_now(f"Traceback (most recent call last):\n{line}", {"Fare": "float64"}, {"df": "DataFrame"})
    assert hint.startswith("The value the code indexed is already one number")
    assert "without [0], .iloc or .values" in hint


def test_an_attribute_error_on_a_frame_is_not_told_of_scalars() -> None:
    hint = known_now("Traceback\nAttributeError: 'DataFrame' object has no attribute 'Fare '", {"Fare": "float64"}, {})
    assert "one number" not in hint


@pytest.mark.parametrize(("missing", "statement"), [
    ("stats", "from scipy import stats"),
    ("pearsonr", "from scipy.stats import pearsonr"),
    ("np", "import numpy as np"),
    ("RandomForestRegressor", "from sklearn.ensemble import RandomForestRegressor"),
    ("mean_squared_error", "from sklearn.metrics import mean_squared_error"),
])
def test_a_name_a_library_defines_is_told_the_import_that_defines_it(missing: str, statement: str) -> None:
    # DABench 275 and 428 at f7080f7: `RandomForestRegressor` and `stats` used without their import.
    hint = known_now(f"Traceback\nNameError: name '{missing}' is not defined", {}, {"df": "DataFrame"})
    assert f"Import it in this cell:\n<data>\n{statement}\n</data>" in hint
    assert "Defined names:\n<data>\ndf\n</data>" in hint


def test_a_name_no_library_defines_gets_the_defined_names_only() -> None:
    hint = known_now("Traceback\nNameError: name 'by_region' is not defined", {}, {"df": "DataFrame"})
    assert hint == "Defined names:\n<data>\ndf\n</data>\nDefine anything else in this cell."


def test_a_key_spelled_unlike_its_column_is_told_the_column_it_means() -> None:
    # DABench 359 at 7c6f09f: 'wind_speed' for the column 'wind speed', written again on the retry.
    columns = {"time": "str", "wind direction": "str", "wind speed": "float64", "temperature": "float64"}
    hint = known_now("Traceback\nKeyError: ['wind_speed']", columns, {})
    assert "The column of df it means is spelled:\n<data>\nwind speed\n</data>" in hint
    assert "The columns of df are exactly:" in hint
    assert "spelled" not in known_now("Traceback\nKeyError: 'revenue_per_region'", columns, {})
