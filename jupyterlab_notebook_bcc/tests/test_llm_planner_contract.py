"""The task's contract, read from the task's words without the model (contract.py): which variables it
asks for, what each must be, closed or open, and the parts of a task that asks for several things."""

from __future__ import annotations

import pytest

from jupyterlab_notebook_bcc.llm_planner.contract import Deliverable, checked, coverage, extract, read_columns

COLUMNS = {"region": "object", "quarter": "int64", "product": "object", "units": "int64", "revenue": "float64"}


def kinds(task: str, columns: dict[str, str] | None = None) -> list[tuple[str, str, int | None, str]]:
    return [(d.name, d.kind, d.decimals, d.of_column) for d in extract(task, columns).deliverables]


class TestDeliverables:
    @pytest.mark.parametrize(
        ("task", "expected"),
        [
            ("Which region has the highest total revenue? Store the result in a variable named answer.",
             [("answer", "label", None, "region")]),
            ("Which quarter (a number from 1 to 4) had the most units? Store the result in a variable named answer.",
             [("answer", "label", None, "quarter")]),
            ("What is the mean revenue, rounded to 2 decimals? Put it in `mean_revenue`.",
             [("mean_revenue", "number", 2, "")]),
            ("What is the total revenue, rounded to the nearest integer? Store it in answer.",
             [("answer", "integer", None, "")]),
            ("How many rows does the data have? Store the result in a variable named answer.",
             [("answer", "integer", None, "")]),
            ("哪个地区的总收入最高？把结果存入变量 `answer`。", [("answer", "label", None, "region")]),
            ("计算平均收入，保留两位小数，存入变量 answer。", [("answer", "number", 2, "")]),
        ],
    )
    def test_a_named_variable_and_what_it_must_be(self, task: str, expected: list[tuple[str, str, int | None, str]]) -> None:
        assert kinds(task, COLUMNS) == expected

    def test_a_which_question_names_a_column_only_once_the_data_is_known(self) -> None:
        task = "Which region has the highest revenue? Store it in answer."
        assert kinds(task) == [("answer", "any", None, "")]
        contract = extract(task, COLUMNS)
        assert contract.public() == {
            "deliverables": [{"name": "answer", "kind": "label", "of_column": "region", "frame": "df",
                              "describe": "a region name, a value of df['region']"}],
            "summary": "Deliver: `answer`, a region name, a value of df['region']",
        }

    def test_at_name_formats_each_with_its_own_description(self) -> None:
        task = (
            "Question: Is the revenue of the north correlated with its units?\n"
            "Use the Pearson test.\n"
            "@coefficient[r] @p_value[p] @verdict[word] where \"r\" is a number between -1 and 1, rounded to two "
            "decimal places, \"p\" is the p-value, rounded to four decimal places, and \"word\" is a string, "
            "either \"yes\" or \"no\"."
        )
        contract = extract(task)
        assert [(d.name, d.kind, d.decimals) for d in contract.deliverables] == [
            ("coefficient", "number", 2), ("p_value", "number", 4), ("verdict", "text", None)]
        assert contract.answer_format == "@name[value]" and contract.closed

    def test_the_format_described_as_at_name_value_is_not_a_deliverable(self) -> None:
        # Seen in make eval (DABench 9): "write the answers … as @name[value]" gave a deliverable `name`, reported
        # "not delivered" after a step given up for it.
        task = ("Question: Calculate the mean of the Close Price column.\n"
                "@mean_close_price[mean_value], where \"mean_value\" is a float rounded to two decimal places. "
                "Leave each answer in a kernel variable of its name (`mean_close_price`), and write the answers in "
                "the report, one line each, as @name[value].")
        assert kinds(task) == [("mean_close_price", "number", 2, "")]
        assert extract("Answer as @name[value]: which region sells most?").answer_format == "@name[value]"

    def test_a_list_of_at_names_shares_the_description_after_them(self) -> None:
        task = ("Question: What are the mean and the median of the units?\n"
                "@mean_units[mean], @median_units[median] where both are floats rounded to 3 decimal places.")
        assert kinds(task) == [("mean_units", "number", 3, ""), ("median_units", "number", 3, "")]

    def test_a_text_that_can_only_be_one_of_the_values_the_task_gives(self) -> None:
        # DABench 25: the kernel held "The distribution of BMI values is normal" where "normal" was asked.
        task = ("Question: Check if the BMI values follow a normal distribution.\n"
                "@bmi_distribution[status] where \"status\" is a string that can either be \"normal\" or "
                "\"not_normal\", based on the conditions specified in the constraints.")
        [item] = extract(task).deliverables
        assert (item.name, item.kind, item.choices) == ("bmi_distribution", "text", ("normal", "not_normal"))
        assert item.public()["one_of"] == ["normal", "not_normal"]
        assert item.wording() == 'one of "normal", "not_normal"'
        task = ("@relationship_type[relationship_type], where \"relationship_type\" is a string that can either be "
                "\"linear\", \"nonlinear\", or \"none\" based on the conditions specified in the constraints.")
        assert extract(task).deliverables[0].choices == ("linear", "nonlinear", "none")
        # In the brackets (DABench 268).
        task = '@normality_test_result[A string that should be either "Normal" or "Not Normal"]'
        assert extract(task).deliverables[0].choices == ("Normal", "Not Normal")
        # Quoted words that are not the values it may take are not choices.
        assert extract("Store the region named 'North' in a variable named answer.").deliverables[0].choices == ()

    def test_an_at_name_whose_brackets_describe_the_value(self) -> None:
        # DABench 272: "rounded to two decimal places" inside the brackets was not read, and unrounded
        # values passed their checks.
        task = ("Return 2 values: @mean_ratio[Mean of the TOTUSJZ_TOTUSJH_RATIO column, rounded to two decimal "
                "places], @stddev_ratio[Standard deviation of the TOTUSJZ_TOTUSJH_RATIO column, rounded to two "
                "decimal places].")
        assert kinds(task) == [("mean_ratio", "number", 2, ""), ("stddev_ratio", "number", 2, "")]
        # Names in the brackets are still several values in one answer.
        assert kinds("@counts[count_0, count_1] where both are integers.") == [("counts", "any", None, "")]
        assert kinds('@site_ids[site_id1,site_id2,...] where "site_id1" … each rounded to two decimal places.') == [
            ("site_ids", "any", None, "")]

    def test_a_dict_with_keys(self) -> None:
        task = "Compute the mean and median revenue and store them in a dict named stats with keys 'mean' and 'median'."
        assert [(d.name, d.kind, d.keys) for d in extract(task).deliverables] == [
            ("stats", "dict", ("mean", "median"))]

    def test_words_that_are_not_names_are_not_taken_for_one(self) -> None:
        assert extract("Calculate the return rate per product and plot it as a bar chart.").deliverables == ()
        assert extract("Save it to the notebook, then store the result in memory.").deliverables == ()

    def test_a_closed_question_without_a_named_variable_delivers_answer(self) -> None:
        contract = extract("Which product sold the most units?", COLUMNS)
        assert contract.closed and contract.implicit
        assert contract.deliverables == (Deliverable("answer", "label", of_column="product",
                                                     describe="a product name, a value of df['product']"),)


class TestSize:
    @pytest.mark.parametrize(
        "task",
        ["Which region has the highest revenue?", "How many distinct products are there?", "哪个地区的收入最高？",
         "What is the median revenue? Store it in answer."],
    )
    def test_closed_questions(self, task: str) -> None:
        assert extract(task, COLUMNS).closed

    @pytest.mark.parametrize(
        "task",
        ["Explore the sales data and show the main trends.", "Analyse how revenue changes over the quarters.",
         "Calculate the return rate per product and plot it as a bar chart.", "探索销售数据并可视化趋势。"],
    )
    def test_open_tasks(self, task: str) -> None:
        contract = extract(task, COLUMNS)
        assert not contract.closed and contract.deliverables == ()

    def test_the_parts_of_a_two_part_task(self) -> None:
        contract = extract("Calculate the return rate per product and plot it as a bar chart.")
        assert contract.parts == ("Calculate the return rate per product", "plot it as a bar chart.")
        plan = ["Return rate per product: share of each product's orders that were returned (return_rate)"]
        assert coverage(contract.parts, plan).missing == ["plot it as a bar chart."]
        assert coverage(contract.parts, [*plan, "Bar chart of the return rate"]).missing == []


@pytest.mark.parametrize(
    ("item", "english", "chinese"),
    [
        (Deliverable("answer", "label", of_column="region"), "a value of df['region']", "df['region'] 中的一个值"),
        (Deliverable("rmse", "number", decimals=2), "a number rounded to 2 decimals", "一个数，保留 2 位小数"),
        (Deliverable("n", "integer"), "an integer", "一个整数"),
        (Deliverable("by", "series", index="region"), "a Series indexed by region", "以 region 为索引的 Series"),
        (Deliverable("t", "dataframe", columns=("a", "b")), "a DataFrame with the columns a, b", "含有列 a, b 的 DataFrame"),
        (Deliverable("d", "dict", keys=("a", "b")), "a dict with the keys a, b", "含有键 a, b 的字典"),
        (Deliverable("s", "text", choices=("yes", "no")), 'one of "yes", "no"', '取值之一："yes", "no"'),
        (Deliverable("x"), "it exists", "存在"),
    ],
)
def test_what_the_check_in_the_kernel_holds_a_value_to_in_words(item: Deliverable, english: str, chinese: str) -> None:
    # The report says these after "checked in the kernel", as the panel does: a kind and a form, not a right answer.
    assert checked(item) == english
    assert checked(item, chinese=True) == chinese


def test_the_columns_come_from_the_load_steps_preview() -> None:
    preview = ("Shape: 3 rows x 3 columns\nColumns and types:\nregion       object\nunit price  float64\n"
               "quarter       int64\nFirst rows:\n  region  unit price  quarter\n0  North  1.0  1")
    assert read_columns(preview) == {"region": "object", "unit price": "float64", "quarter": "int64"}
