"""The pass over each executed notebook: parameters hidden, figures with their alt text and
caption, each figure a captioned figure of its own on the page."""

import nbformat

from book_build.tidy import (
    figure_caption,
    page_figures,
    split_out_figure,
    tidy_executed_notebook,
)

PAGE = """# A chapter

```{figure} figures/fig_one.png
:name: fig-one
:alt: Two panels of curves

**The first figure.** Left: one thing;
right: another.

Legend paragraph, not part of the caption.
```

```{figure} figures/fig_two.png
:alt: A heat map
:width: 70%

**The second.** Without a label.
```
"""


def _glue_output(name):
    return nbformat.v4.new_output("display_data", data={
        "application/papermill.record/text/plain": "1"}, metadata={"scrapbook": {"name": name}})


def _image_output(metadata=None):
    return nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=",
                                                        "text/plain": "<Figure>"},
                                  metadata=metadata or {})


def _table_output():
    return nbformat.v4.new_output("execute_result", data={"text/html": "<table></table>"},
                                  execution_count=1)


def test_the_pages_give_each_figure_its_alt_text_caption_and_label(tmp_path):
    (tmp_path / "chapter.md").write_text(PAGE)
    figures = page_figures(tmp_path)
    one, two = figures["fig_one"], figures["fig_two"]
    assert (one.alt, one.label, one.page) == ("Two panels of curves", "fig-one", "chapter")
    assert one.caption == "**The first figure.** Left: one thing; right: another."
    assert (two.alt, two.label, two.caption) == ("A heat map", "", "**The second.** Without a label.")
    assert figure_caption(one).endswith("(Also shown as {numref}`fig-one` in the chapter.)")
    assert figure_caption(two).endswith("(Also shown in {doc}`/book/chapter`.)")


def test_a_figure_leaves_its_cell_for_a_captioned_cell_of_its_own():
    cell = nbformat.v4.new_code_cell('show_figure("fig_one", fig)\ntable')
    cell.outputs = [_glue_output("a"), _image_output(), _table_output()]
    code, figure, after = split_out_figure(cell, "**Title.** Text.")
    assert code is cell and [o.output_type for o in code.outputs] == ["display_data"]
    assert "image/png" not in code.outputs[0].data
    assert figure.source.startswith("#") and figure.metadata["tags"] == ["remove-input"]
    assert figure.metadata["mystnb"]["figure"] == {"caption": "**Title.** Text."}
    assert [("image/png" in o.data) for o in figure.outputs] == [True]
    assert after.source.startswith("#") and after.outputs[0].output_type == "execute_result"
    # nothing after the image: no third cell; no image or two: the cell as it was
    lone = nbformat.v4.new_code_cell('show_figure("fig_one", fig)')
    lone.outputs = [_image_output()]
    assert len(split_out_figure(lone, "c")) == 2
    none = nbformat.v4.new_code_cell("x")
    none.outputs = [_table_output()]
    assert split_out_figure(none, "c") == [none]


def test_tidying_captions_page_figures_and_the_notebooks_own(tmp_path):
    pages = tmp_path / "book"
    pages.mkdir()
    (pages / "chapter.md").write_text(PAGE)
    notebook = nbformat.v4.new_notebook()
    shown = nbformat.v4.new_code_cell('show_figure("fig_one", fig)')
    shown.outputs = [_image_output()]
    own = nbformat.v4.new_code_cell('show_figure("fig_own", fig, caption=CAPTION)')
    own.outputs = [_image_output({"caption": "**Own.** Its words."})]
    bare = nbformat.v4.new_code_cell('show_figure("fig_bare", fig)')
    bare.outputs = [_image_output()]
    parameters = nbformat.v4.new_code_cell("profile = 'quick'")
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [parameters, shown, own, bare]
    path = tmp_path / "n.ipynb"
    nbformat.write(notebook, path)
    tidy_executed_notebook(path, page_figures(pages))
    cells = nbformat.read(path, as_version=4).cells
    assert "remove-cell" in cells[0].metadata["tags"]
    captions = [c.metadata.get("mystnb", {}).get("figure", {}).get("caption") for c in cells]
    assert captions == [None, None, figure_caption(page_figures(pages)["fig_one"]), None,
                        "**Own.** Its words.", None]
    assert cells[2].metadata["mystnb"]["image"] == {"alt": "Two panels of curves"}
    assert cells[5].metadata["mystnb"]["image"] == {"alt": "Figure: bare"}  # no page, no caption
