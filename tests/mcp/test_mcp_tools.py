"""The tool surface over real MCP: every schema is strict JSON Schema 2020-12 with standard
formats only, argument names and enum values are case-insensitive, a misspelled field is refused
by name (and changes nothing), and the text block is compact JSON equal to structuredContent."""

import json

from jsonschema.validators import Draft202012Validator
from mcp import Client

from test_mcp_client import UNSTRUCTURED, body, error, params, project, reindex_and_wait, run, without_nulls
from test_mcp_edit import element, writable

# JSON Schema 2020-12, validation vocabulary §7.3.
STANDARD_FORMATS = {
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
    "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template",
    "json-pointer", "relative-json-pointer", "regex",
}
SUBSCHEMA = {"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
             "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
SUBSCHEMA_LIST = {"prefixItems", "allOf", "anyOf", "oneOf"}
SUBSCHEMA_MAP = {"properties", "patternProperties", "$defs", "dependentSchemas"}


def formats(schema, path="#"):
    """Every `format` keyword in a schema and its subschemas, as (path, value)."""
    if not isinstance(schema, dict):
        return []
    found = [(path, schema["format"])] if "format" in schema else []
    for key, value in schema.items():
        if key in SUBSCHEMA:
            found += formats(value, f"{path}/{key}")
        elif key in SUBSCHEMA_LIST:
            for i, s in enumerate(value):
                found += formats(s, f"{path}/{key}/{i}")
        elif key in SUBSCHEMA_MAP:
            for name, s in value.items():
                found += formats(s, f"{path}/{key}/{name}")
    return found


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


TABLE = "# 価格\n\n| 品目 | 価格 |\n|:--|--:|\n| 豚肉 | 25 |\n| 鶏肉 | 18 |\n"


def test_every_tool_schema_passes_a_strict_2020_12_check():
    async def go():
        async with Client(params(project())) as c:
            tools = (await c.list_tools()).tools
            assert tools
            for t in tools:
                for which, schema in (("input", t.input_schema), ("output", t.output_schema)):
                    if schema is None and which == "output" and t.name in UNSTRUCTURED:
                        continue  # plain text blocks, or binary results (an image block or resource + metadata text)
                    Draft202012Validator.check_schema(schema)
                    bad = [(p, f) for p, f in formats(schema) if f not in STANDARD_FORMATS]
                    assert not bad, (t.name, which, bad)
                    assert "uint" not in json.dumps(schema), (t.name, which)
            # The walk sees what it must: a nested non-standard format is found.
            assert formats({"properties": {"n": {"anyOf": [{"format": "uint64"}]}}}) == [
                ("#/properties/n/anyOf/0", "uint64")]
            # Real results conform to their output schemas, formats checked.
            by = {t.name: t for t in tools}
            await reindex_and_wait(c)
            for name, args in [
                ("kb_status", {}),
                ("kb_read", {"request": {"path": "kyoto.md"}}),
                ("kb_search", {"request": {"query": "京都", "explain": True}}),
                ("kb_list_files", {"request": {}}),
                ("kb_outline", {"request": {"path": "kyoto.md"}}),
                ("kb_list_images", {"pageSize": 5}),
            ]:
                validator = Draft202012Validator(by[name].input_schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
                validator.validate(args)
                result = body(await c.call_tool(name, args))
                validator = Draft202012Validator(by[name].output_schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
                validator.validate(result)
    run(go())


def test_names_and_enum_values_are_case_insensitive():
    async def go():
        async with Client(params(project())) as c:
            await reindex_and_wait(c)
            res = body(await c.call_tool("kb_search", {"Request": {"QUERY": "京都", "Mode": "LEXICAL", "topk": 3}}))
            assert {r["path"] for r in res["results"]} == {"kyoto.md"}
            assert res["mode"] == "lexical" and all("searchMode" not in r for r in res["results"])
            page = body(await c.call_tool("kb_read", {"REQUEST": {"Path": "kyoto.md", "MAXELEMENTS": 1}}))
            assert page["path"] == "kyoto.md" and len(page["elements"]) == 1
            err = error(await c.call_tool("kb_read", {"request": {"path": "kyoto.md", "PATH": "other.md"}}))
            assert err["code"] == "INVALID_ARGUMENT"
            assert "'path'" in err["message"] and "'PATH'" in err["message"], err
            err = error(await c.call_tool("kb_read", {"request": {"path": "kyoto.md", "maxElemnts": 1}}))
            assert err["code"] == "INVALID_ARGUMENT" and "'maxElemnts'" in err["message"], err
            assert "maxElements" in err["message"], "suggests the field it resembles"
            err = error(await c.call_tool("kb_status", {"unexpected": True}))
            assert err["code"] == "INVALID_ARGUMENT" and "'unexpected'" in err["message"], err
    run(go())


def test_a_misspelled_table_field_is_refused_by_name_and_the_file_is_unchanged():
    async def go():
        root = project()
        async with Client(writable(root)) as c:
            (root / "table.md").write_text(TABLE, encoding="utf-8")
            before = (root / "table.md").read_bytes()
            table, _ = await element(c, "table.md", "table")
            # Without deny_unknown_fields this appended the row instead of inserting it.
            err = error(await c.call_tool("kb_edit_table", {
                "path": "table.md", "pointer": table["pointer"], "action": "insert_row",
                "values": ["牛肉", "30"], "beforeRowIndx": 0}))
            assert err["code"] == "INVALID_ARGUMENT", err
            assert "kb_edit_table" in err["message"] and "'beforeRowIndx'" in err["message"], err
            assert "beforeRowIndex" in err["message"], err
            err = error(await c.call_tool("kb_edit_table", {
                "path": "table.md", "pointer": table["pointer"], "action": "update_cells",
                "updates": [{"rowIndex": 0, "column": "価格", "valu": "26"}]}))
            assert err["code"] == "INVALID_ARGUMENT" and "'valu'" in err["message"], err
            assert "updates[0]" in err["message"], err
            assert (root / "table.md").read_bytes() == before
            # The same call spelled in other cases is understood.
            edited = body(await c.call_tool("kb_edit_table", {
                "Path": "table.md", "POINTER": table["pointer"], "Action": "INSERT_ROW",
                "Values": ["牛肉", "30"], "beforeRowINDEX": 0}))
            assert edited["pointer"].startswith("1.t1~")
            text = (root / "table.md").read_text(encoding="utf-8")
            assert text == "# 価格\n\n| 品目 | 価格 |\n|:--|--:|\n| 牛肉 | 30 |\n| 豚肉 | 25 |\n| 鶏肉 | 18 |\n", text
            edited = body(await c.call_tool("kb_edit_table", {
                "path": "table.md", "pointer": edited["pointer"], "action": "Set_Alignment",
                "column": "価格", "alignment": "Center"}))
            page = body(await c.call_tool("kb_read", {"request": {"path": "table.md", "pointer": edited["pointer"]}}))
            assert [col["alignment"] for col in page["table"]["columns"]] == ["left", "center"]
    run(go())


def test_the_text_block_is_compact_json_equal_to_structured_content():
    async def go():
        async with Client(params(project())) as c:
            await reindex_and_wait(c)
            for name, args in [
                ("kb_status", {}),
                ("kb_read", {"request": {"path": "kyoto.md"}}),
                ("kb_search", {"request": {"query": "京都"}}),
            ]:
                result = await c.call_tool(name, args)
                structured = body(result)
                text = result.content[0].text
                assert "\n" not in text, (name, text[:200])
                assert text == compact(json.loads(text)), name
                assert structured == without_nulls(json.loads(text)), name
    run(go())
