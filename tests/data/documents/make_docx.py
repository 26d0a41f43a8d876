#!/usr/bin/env python3
"""Writes notes.docx: the smallest Word document Hearth reads (the content types
and the body part), with a Title, a Heading 2, paragraphs with a tab and a line
break, and a two-cell table row. Run from this folder; the expected text is
written in tests/app/documents/docx_extractor_test.cpp."""
import zipfile

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def para(text, style=None):
    ppr = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{ppr}<w:r>{text}</w:r></w:p>"


BODY = (
    f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {W}><w:body>'
    + para("<w:t>Boiler manual</w:t>", "Title")
    + para("<w:t>Reset</w:t>", "Heading2")
    + para('<w:t xml:space="preserve">Hold the red button </w:t><w:t>for ten seconds.</w:t>')
    + para("<w:t>Code:</w:t><w:tab/><w:t>E42</w:t><w:br/><w:t>means low pressure.</w:t>")
    + "<w:tbl><w:tr><w:tc>" + para("<w:t>Cell one</w:t>") + "</w:tc><w:tc>" + para("<w:t>Cell two</w:t>")
    + "</w:tc></w:tr></w:tbl>"
    + "</w:body></w:document>"
)
TYPES = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
         'content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
         'officedocument.wordprocessingml.document.main+xml"/></Types>')

with zipfile.ZipFile("notes.docx", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("[Content_Types].xml", TYPES)
    z.writestr("word/document.xml", BODY)
