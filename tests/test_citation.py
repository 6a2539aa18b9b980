"""How to cite the book: ``CITATION.cff`` is valid Citation File Format 1.2.0 (checked here,
offline, against the rules of that version's schema that the file can touch), and it agrees with
the introduction's "How to cite" block, the package's version and license and the book's title."""

import datetime
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

# Citation File Format 1.2.0 (its schema.json, https://citation-file-format.github.io/1.2.0/schema):
# the keys each object may have (no others), the keys it must have, and the closed vocabularies.
CFF_KEYS = {"abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi",
            "identifiers", "keywords", "license", "license-url", "message", "preferred-citation",
            "references", "repository", "repository-artifact", "repository-code", "title", "type",
            "url", "version"}
CFF_REQUIRED = {"authors", "cff-version", "message", "title"}
CFF_TYPES = {"dataset", "software"}
PERSON_KEYS = {"address", "affiliation", "alias", "city", "country", "email", "family-names",
               "fax", "given-names", "name-particle", "name-suffix", "orcid", "post-code",
               "region", "tel", "website"}
ENTITY_KEYS = {"address", "alias", "city", "country", "date-end", "date-start", "email", "fax",
               "location", "name", "orcid", "post-code", "region", "tel", "website"}
REFERENCE_KEYS = {
    "abbreviation", "abstract", "authors", "collection-doi", "collection-title",
    "collection-type", "commit", "conference", "contact", "copyright", "data-type", "database",
    "database-provider", "date-accessed", "date-downloaded", "date-published", "date-released",
    "department", "doi", "edition", "editors", "editors-series", "end", "entry", "filename",
    "format", "identifiers", "institution", "isbn", "issn", "issue", "issue-date", "issue-title",
    "journal", "keywords", "languages", "license", "license-url", "loc-end", "loc-start",
    "location", "medium", "month", "nihmsid", "notes", "number", "number-volumes", "pages",
    "patent-states", "pmcid", "publisher", "recipients", "repository", "repository-artifact",
    "repository-code", "scope", "section", "senders", "start", "status", "term", "thesis-type",
    "title", "translators", "type", "url", "version", "volume", "volume-title", "year",
    "year-original"}
REFERENCE_REQUIRED = {"authors", "title", "type"}
REFERENCE_TYPES = {
    "art", "article", "audiovisual", "bill", "blog", "book", "catalogue", "conference-paper",
    "conference", "data", "database", "dictionary", "edited-work", "encyclopedia",
    "film-broadcast", "generic", "government-document", "grant", "hearing", "historical-work",
    "legal-case", "legal-rule", "magazine-article", "manual", "map", "multimedia", "music",
    "newspaper-article", "pamphlet", "patent", "personal-communication", "proceedings", "report",
    "serial", "slides", "software-code", "software-container", "software-executable",
    "software-virtual-machine", "software", "sound-recording", "standard", "statute", "thesis",
    "unpublished", "video", "website"}
REFERENCE_STATUSES = {"abstract", "advance-online", "in-preparation", "in-press", "preprint",
                      "submitted"}
IDENTIFIER_TYPES = {"doi", "url", "swh", "other"}
URL = re.compile(r"^(https|http|ftp|sftp)://.+")
DATE = re.compile(r"^[0-9]{4}-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01])$")
DOI = re.compile(r"^10\.\d{4,9}(\.\d+)?/[A-Za-z0-9:/_;\-\.\(\)\[\]\\]+$")
URL_KEYS = {"url", "repository", "repository-artifact", "repository-code", "license-url"}


def _dates_as_text(value):
    """``value`` with YAML's dates as their text, as the format's schema reads them."""
    if isinstance(value, dict):
        return {key: _dates_as_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_dates_as_text(item) for item in value]
    return value.isoformat() if isinstance(value, datetime.date) else value


def _citation() -> dict:
    return _dates_as_text(yaml.safe_load((ROOT / "CITATION.cff").read_text()))


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _text(value) -> bool:
    return isinstance(value, str) and len(value) > 0


def _list(value) -> bool:
    """A non-empty list without repeats, as the format's lists are."""
    return (isinstance(value, list) and len(value) > 0
            and len({repr(item) for item in value}) == len(value))


def _cff_problems(where: str, record: dict, keys: set, required: set) -> list[str]:
    """What in ``record`` breaks the rules 1.2.0 sets for an object with ``keys`` and
    ``required``, for the fields this checks (authors, URLs, dates, DOIs, identifiers, lists)."""
    problems = [f"{where}: unknown key {key!r}" for key in sorted(set(record) - keys)]
    problems += [f"{where}: missing {key!r}" for key in sorted(required - set(record))]
    for key, value in record.items():
        if key in ("authors", "contact", "editors", "translators"):
            if not _list(value):
                problems.append(f"{where}.{key}: not a non-empty list without repeats")
                continue
            for index, author in enumerate(value):
                is_entity = isinstance(author, dict) and "name" in author
                allowed = ENTITY_KEYS if is_entity else PERSON_KEYS
                if not isinstance(author, dict) or not author or set(author) - allowed:
                    problems.append(f"{where}.{key}[{index}]: neither a person nor an entity")
                elif not all(_text(text) for text in author.values()):
                    problems.append(f"{where}.{key}[{index}]: an empty or non-text field")
        elif key in URL_KEYS and not (_text(value) and URL.match(value)):
            problems.append(f"{where}.{key}: not a URL")
        elif key.startswith("date-") and not (_text(value) and DATE.match(value)):
            problems.append(f"{where}.{key}: not a YYYY-MM-DD date")
        elif key == "doi" and not (_text(value) and DOI.match(value)):
            problems.append(f"{where}.{key}: not a DOI")
        elif key == "keywords" and not (_list(value) and all(map(_text, value))):
            problems.append(f"{where}.{key}: not a list of distinct words")
        elif key == "identifiers":
            if not _list(value):
                problems.append(f"{where}.{key}: not a non-empty list without repeats")
                continue
            for index, identifier in enumerate(value):
                if (not isinstance(identifier, dict)
                        or set(identifier) - {"type", "value", "description"}
                        or identifier.get("type") not in IDENTIFIER_TYPES
                        or not _text(identifier.get("value"))):
                    problems.append(f"{where}.{key}[{index}]: not an identifier")
        elif key == "version" and not (_text(value) or isinstance(value, (int, float))):
            problems.append(f"{where}.{key}: neither a text nor a number")
        elif key in ("message", "title", "abstract", "commit", "journal", "notes") \
                and not _text(value):
            problems.append(f"{where}.{key}: not a non-empty text")
    return problems


def test_the_citation_file_is_valid_citation_file_format_1_2_0():
    citation = _citation()
    assert citation["cff-version"] == "1.2.0"
    problems = _cff_problems("CITATION.cff", citation, CFF_KEYS, CFF_REQUIRED)
    assert citation.get("type", "software") in CFF_TYPES
    for index, reference in enumerate(citation.get("references", [])):
        where = f"references[{index}]"
        problems += _cff_problems(where, reference, REFERENCE_KEYS, REFERENCE_REQUIRED)
        if reference.get("type") not in REFERENCE_TYPES:
            problems.append(f"{where}.type: {reference.get('type')!r} is not a type of work")
        if "status" in reference and reference["status"] not in REFERENCE_STATUSES:
            problems.append(f"{where}.status: {reference['status']!r} is not a status")
        for key in ("year", "month", "volume", "start", "end", "pages"):
            if key in reference and type(reference[key]) is not int:
                problems.append(f"{where}.{key}: not an integer")
    assert problems == []


def test_the_citation_file_names_the_book_its_version_and_the_papers():
    citation = _citation()
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert citation["type"] == "software"
    assert citation["version"] == _project()["version"]
    assert citation["license"] == _project()["license"]["text"]  # an SPDX identifier
    assert citation["title"].startswith(config["title"])
    # the authors _config.yml names (the book's contributors, as one entity)
    assert config["author"].startswith(citation["authors"][0]["name"])
    bibliography = (ROOT / "book" / "references.bib").read_text()
    for reference in citation["references"]:
        arxiv = reference["identifiers"][0]["value"].removeprefix("arXiv:")
        assert re.search(rf"eprint\s*=\s*\{{{re.escape(arxiv)}\}}", bibliography), arxiv
        assert reference["url"] == f"https://arxiv.org/abs/{arxiv}"


def test_the_introduction_says_how_to_cite_as_the_citation_file_does():
    intro = (ROOT / "book" / "intro.md").read_text()
    assert "\n## How to cite\n" in intro
    entry = re.search(r"```bibtex\n(@\w+\{.*?)\n```", intro, re.S)
    assert entry, "no BibTeX block in the introduction"
    fields = dict(re.findall(r"^\s+(\w+)\s*=\s*\{(.*)\},?$", entry[1], re.M))
    citation = _citation()
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert fields["version"] == citation["version"] == _project()["version"]
    assert fields["title"] == citation["title"]
    assert fields["author"] == "{" + citation["authors"][0]["name"] + "}"
    assert fields["year"] == str(config["copyright"])
