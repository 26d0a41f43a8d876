#!/usr/bin/env python3
"""Writes tests/data/jinja/reference_cases.json: small templates rendered by
the reference (Jinja2, configured as Hugging Face's apply_chat_template
configures it: sandboxed, trim_blocks, lstrip_blocks, loopcontrols, tojson
keeping non-ASCII). The C++ unit tests compare Hearth's interpreter with these
outputs. It also writes tool_cases.json: the fixture templates that take tools,
rendered with tool definitions, tool calls and tool results.
Run with Jinja2 3.1 installed: python3 make_reference_cases.py DATA_DIR"""
import glob
import os
import json
import sys

from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message):
    from jinja2.exceptions import TemplateError
    raise TemplateError(message)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception

CONTEXT = {
    "x": [1, 2],
    "d": {"a": 1, "b": [1, "é"]},
    "s": "  Hello World  ",
    "n": None,
    "msgs": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo", "tool_calls": [{"function": {"name": "f", "arguments": {"k": 1}}}]},
        {"role": "tool", "content": "42"},
    ],
}

TEMPLATES = [
    # whitespace control, trim_blocks, lstrip_blocks
    "a\n  {% if true %}\n    b\n  {% endif %}\nc\n",
    "a  {%- if true -%}  b  {%- endif -%}  c",
    "x {{- 1 -}} y {{ 2 }} z",
    "  {# comment #}\nnext\n  {#- c2 -#}  tail",
    "a\n    {%+ if true %}kept{% endif %}\n",
    "{% if true +%}\nkeep newline{% endif %}",
    "line1\r\nline2\r\n{% if true %}\r\nx\r\n{% endif %}\r\n",
    "{% raw %}{{ not rendered }}{% endraw %}",
    "{{ '{{' }} and {{ \"}}\" }}",
    "{{ {'a': {'b': 1}} }}",
    # literals and operators
    "{{ [1,'a',none,true,1.5,{'k':'v'}] }}{{ 1e16 }} {{ 1e-5 }} {{ 2.0 }} {{ 10/4 }} {{ 7//2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 2**10 }}",
    "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 10 - 3 - 2 }} {{ 1_000 + 1 }}",
    "{{ 'a' ~ 1 ~ 2.5 ~ none ~ true ~ undefined_name }}",
    "{{ 'x' * 3 }}{{ [1] * 3 }}{{ 3 * 'ab' }}",
    "{{ 'a' 'b' \"c\" }}{{ 'it\\'s' }}{{ \"tab\\there\" }}{{ 'uni\\u00e9' }}",
    "{{ true and 'yes' }} {{ false or 'fallback' }} {{ none or 0 or '' or 'last' }} {{ not none }}",
    "{{ 'yes' if x else 'no' }} {{ 'yes' if n else 'no' }} [{{ 'yes' if n }}]",
    "{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'a' < 'b' }} {{ [1,2] < [1,3] }} {{ 1 == 1.0 }} {{ true == 1 }} {{ '1' == 1 }}",
    "{{ 'a' in 'cat' }} {{ 1 in x }} {{ 'a' in d }} {{ 'z' not in d }} {{ 3 not in x }}",
    "{{ (1, 2) }} {{ () }} {{ (1,) }} {{ [1, (2, 3)] }}",
    "{{ x[0] }} {{ x[-1] }} [{{ x[5] }}] {{ d['a'] }} {{ d.a }} [{{ d.zz }}] {{ 'abc'[1] }} {{ 'abc'[-1] }}",
    "{{ 'abcdef'[1:4] }} {{ 'abcdef'[::2] }} {{ 'abcdef'[::-1] }} {{ x[1:] }} {{ x[:-1] }} {{ 'héllo'[1:3] }} {{ [1,2,3,4,5][-2:] }} {{ [1,2,3,4,5][4:1:-2] }}",
    "{{ d.items() | list }} {{ d.keys() | list }} {{ d.values() | list }} {{ d.get('a') }} {{ d.get('zz', 'dflt') }} {{ d.get('zz') }}",
    "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ 'xxhixx'.strip('x') }}|{{ s.split() }}|{{ 'a,b,,c'.split(',') }}|{{ 'a b c'.split(' ', 1) }}",
    "{{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith('lo') }} {{ 'Hello'.startswith(('x', 'H')) }} {{ 'Hello'.upper() }} {{ 'Hello'.lower() }} {{ 'a-b-c'.replace('-', '+') }} {{ 'a-b-c'.replace('-', '+', 1) }}",
    "{{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }} {{ 'banana'.find('an') }} {{ 'banana'.count('an') }} {{ ', '.join(['a', 'b']) }} {{ '42'.isdigit() }} {{ 'x1'.isdigit() }}",
    # filters
    "{{ s | trim }}|{{ 'abc' | upper }}|{{ 'ABC' | lower }}|{{ 'hello WORLD' | capitalize }}|{{ 'hello world' | title }}",
    "{{ 'héllo' | length }} {{ x | length }} {{ d | length }} {{ x | count }}",
    "{{ d | tojson }}|{{ d | tojson(indent=2) }}|{{ 'aé\\n\"<>&\\'' | tojson }}|{{ 1.0 | tojson }}|{{ [] | tojson(indent=2) }}|{{ {} | tojson }}|{{ msgs | tojson }}",
    "{{ [1.5, 1e20, 1e16, 0.0001, 1e-7, -2.5, 100.0, 0.1] | tojson }}{{ [true, false, none] | tojson }}{{ '\\x01\\x1f\\x7f\\u2028' | tojson }}",
    "{{ msgs[2] | tojson(indent=4) }}",
    "{{ x | join(', ') }} {{ ['a', 1, none] | join }} {{ msgs | join('|', attribute='role') }}",
    "{{ undefined_name | default('z') }} {{ n | default('z') }} {{ n | default('z', true) }} {{ '' | default('z', true) }} {{ 0 | d('zero', true) }}",
    "{{ 'aaa' | replace('a', 'b') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ 'abc' | replace('', '-') }}",
    "{{ x | first }} {{ x | last }} {{ 'abc' | first }} {{ 'abc' | list }} {{ d | list }} {{ x | reverse | list }} {{ 'abc' | reverse }}",
    "{{ x | map('string') | list }} {{ msgs | map(attribute='role') | list }} {{ [1,2,3,4] | select('odd') | list }} {{ [1,2,3,4] | reject('even') | list }} {{ [1,2,3] | select('gt', 1) | list }} {{ [0, 1, '', 'a'] | select | list }}",
    "{{ msgs | selectattr('role', 'equalto', 'user') | list | length }} {{ msgs | rejectattr('role', 'equalto', 'user') | map(attribute='role') | join(',') }} {{ msgs | selectattr('tool_calls') | list | length }} {{ msgs | selectattr('tool_calls', 'defined') | map(attribute='role') | first }}",
    "{{ d | items | list }} {{ d | dictsort }} {% for k, v in d | items %}{{ k }}={{ v }};{% endfor %}",
    "{{ 42 | string }} {{ [1] | string }} {{ 3.7 | int }} {{ '42' | int + 1 }} {{ 'x' | int }} {{ '4.5' | int }} {{ '4.5' | float }} {{ 3 | float }} {{ true | int }}",
    "{{ 'a\\nb\\nc' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(4, first=true, blank=true) }}|{{ 'a\\n\\nb\\n' | indent(3) }}|{{ 'x\\ny' | indent('>>') }}",
    "{{ -3 | abs }} {{ 2.567 | round(1) }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.567 | round(1, 'floor') }} {{ 2.561 | round(2, 'ceil') }}",
    "{{ [3, 1, 2] | sort }} {{ [3, 1, 2] | sort(reverse=true) }} {{ ['b', 'A', 'c'] | sort }} {{ msgs | sort(attribute='role') | map(attribute='role') | join(',') }} {{ [1, 2, 3] | sum }} {{ [1, 1, 2] | unique | list }} {{ x | min }} {{ x | max }}",
    "{{ '<a href=\"x\">&\\'' | escape }} {{ '<b>' | e }} {{ '<b>' | safe }}",
    "{{ 'a' | safe + '<b>' }} {{ '<x>' + 'y' | safe }} {{ ('<' | e) + '>' }} {{ '<' | e | e }} {{ 'q' | safe + {'k': '\"'} | tojson }}",
    "{{ '%s-%d' | format('a', 3) }} {{ '%.2f%%' | format(1.5) }}",
    # tests
    "{{ 'abc' is string }} {{ 1 is number }} {{ d is mapping }} {{ 'a' is iterable }} {{ 1 is iterable }} {{ n is none }} {{ 3 is odd }} {{ 4 is even }} {{ x is sequence }} {{ true is boolean }} {{ 1 is integer }} {{ 1.0 is float }} {{ true is number }} {{ n is not none }}",
    "{{ undefined_name is defined }} {{ undefined_name is undefined }} {{ d.a is defined }} {{ d.zz is defined }} {{ 6 is divisibleby 3 }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 1 is eq 1 }} {{ 2 is gt 1 }} {{ n is sameas none }} {{ 'a' is in 'cat' }} {{ d.get is callable }}",
    "{{ not undefined_name is defined }} {{ msgs[0].content is string and msgs[0].role == 'system' }}",
    # statements
    "{% for m in msgs %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}/{{ loop.length }}/{{ loop.first }}/{{ loop.last }}/{{ loop.cycle('o', 'e') }}/{{ m.role }};{% endfor %}",
    "{% for m in msgs %}[{{ loop.previtem.role if loop.previtem is defined else '-' }}>{{ m.role }}>{{ loop.nextitem.role if loop.nextitem is defined else '-' }}]{% endfor %}",
    "{% for m in msgs if m.role != 'system' %}{{ loop.index }}{{ m.role }}{% if loop.last %}!{% endif %} {% endfor %}",
    "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}",
    "{% for i in [] %}x{% else %}empty{% endfor %} {% for k in d %}{{ k }}{% endfor %} {% for c in 'héj' %}[{{ c }}]{% endfor %} {% for a, b in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %}",
    "{% for i in range(3) %}{% for j in range(i) %}{{ i }}{{ j }} {% endfor %}{% endfor %}{{ range(5) | list }}{{ range(1, 10, 3) | list }}{{ range(5, 0, -2) | list }}",
    "{% for i in [1, 2] %}{% if i == 2 %}[{{ y }}]{% endif %}{% set y = i %}{% endfor %}[{{ y }}]",
    "{% set a = 1 %}{% if true %}{% set a = 2 %}{% endif %}{{ a }}{% set b, c = 3, 4 %}{{ b }}{{ c }}{% set t = 1, 2 %}{{ t }}",
    "{% set ns = namespace(a=1, items=[]) %}{% for i in range(3) %}{% set ns.a = ns.a + i %}{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.a }} {{ ns.items }}",
    "{% set ns = namespace() %}{% set ns.flag = true %}{{ ns.flag }}",
    "{% set block %}inside {{ 1 + 1 }}{% endset %}[{{ block }}]",
    "{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', 'Hi') }} {{ greet(greeting='Yo', name='Cy') }}",
    "{% macro m(a, b=2) %}{{ a }}-{{ b }}-{{ varargs }}-{{ kwargs }}{% endmacro %}{{ m(1) }}|{{ m(1, 3, 4) }}|{{ m(1, c=5) }}",
    "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1) | int }}{% endif %}{% endmacro %}{{ fact(10) }}",
    "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold {{ 1 }}{% endcall %}",
    "{% macro each(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(item) each([1, 2]) %}<{{ item }}>{% endcall %}",
    "{% filter upper %}shout {{ 'this' }}{% endfilter %} {% filter trim | upper %}  padded  {% endfilter %}",
    "{% set outer = 'o' %}{% macro show() %}{{ outer }}{% endmacro %}{{ show() }}",
    "{{ msgs[1:] | map(attribute='content') | join(' ') }} {{ (msgs | last).content }} {{ msgs[0]['role'] | upper }}",
    "{%- for m in msgs -%}\n    {%- if m.role == 'user' -%}\n        U:{{ m.content }}\n    {%- elif m.role == 'assistant' and m.tool_calls is defined -%}\n        A:{% for tc in m.tool_calls %}{{ tc.function.name }}({{ tc.function.arguments | tojson }}){% endfor %}\n    {%- else -%}\n        {{ m.role[0] | upper }}:{{ m.content }}\n    {%- endif %}\n\n{% endfor -%}",
    "{% if 'tool_calls' in msgs[2] %}has{% endif %} {% if msgs[2].tool_calls %}truthy{% endif %} {{ msgs[2].tool_calls[0].function.arguments.k }}",
    # errors (the message is the reference's own; Hearth must fail too)
    "{{ raise_exception('custom failure') }}",
    "{{ undefined_name.attr }}",
    "{{ 1 + 'a' }}",
    "{{ range(100001) | length }}",
    "{% for %}",
    "{{ 1 +* 2 }}",
    "{% if true %}unclosed",
    "{{ x.foo.bar }}",
    "{{ n | list }}",
    "{{ 1 / 0 }}",
    "{% include 'other.txt' %}",
]


TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather in a city",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name, e.g. Zürich"},
            "unit": {"type": "string", "enum": ["c", "f"], "description": "Unit"}},
            "required": ["city"]}}},
]
TOOL_MESSAGES = [
    {"role": "system", "content": "You can call tools."},
    {"role": "user", "content": "Weather in Zürich?"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call12345", "type": "function",
         "function": {"name": "get_weather", "arguments": {"city": "Zürich", "unit": "c"}}}]},
    {"role": "tool", "tool_call_id": "call12345", "content": "{\"temp\": 21.5}"},
]


def tool_cases(data_dir):
    cases = []
    for path in sorted(glob.glob(os.path.join(data_dir, "templates", "*.json"))):
        fixture = json.load(open(path, encoding="utf-8"))
        if "tools" not in fixture["template"]:
            continue
        for messages in (TOOL_MESSAGES, TOOL_MESSAGES[:2]):
            case = {"template_file": os.path.basename(path), "messages": messages, "tools": TOOLS,
                    "add_generation_prompt": True}
            try:
                case["output"] = env.from_string(fixture["template"]).render(
                    messages=messages, tools=TOOLS, add_generation_prompt=True,
                    bos_token=fixture["bos_token"], eos_token=fixture["eos_token"])
            except Exception as exc:
                case["error"] = f"{type(exc).__name__}: {exc}"
            cases.append(case)
    return cases


def main():
    data_dir = sys.argv[1]
    out = []
    for source in TEMPLATES:
        case = {"template": source}
        try:
            case["output"] = env.from_string(source).render(**CONTEXT)
        except Exception as exc:  # the reference's message, for information only
            case["error"] = f"{type(exc).__name__}: {exc}"
        out.append(case)
    with open(os.path.join(data_dir, "jinja", "reference_cases.json"), "w", encoding="utf-8") as f:
        json.dump({"context": CONTEXT, "cases": out}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    with open(os.path.join(data_dir, "jinja", "tool_cases.json"), "w", encoding="utf-8") as f:
        json.dump({"cases": tool_cases(data_dir)}, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
