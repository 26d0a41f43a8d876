#!/usr/bin/env python3
"""Writes two-pages.pdf: a minimal PDF 1.4 with a text layer, one line of
Helvetica per page, made byte by byte so the test's expectations (the page
texts) are known without any PDF library. Run from this folder."""

PAGES = ["Hearth reads page one.", "The second page mentions a lighthouse."]


def main():
    objects = []
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(PAGES)))
    font = 3 + 2 * len(PAGES)
    objects.append("<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(PAGES)} >>")
    for i, text in enumerate(PAGES):
        content = f"BT /F1 14 Tf 20 100 Td ({text}) Tj ET"
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 144] /Contents {4 + 2 * i} 0 R "
                       f"/Resources << /Font << /F1 {font} 0 R >> >> >>")
        objects.append(f"<< /Length {len(content)} >>\nstream\n{content}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    with open("two-pages.pdf", "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
