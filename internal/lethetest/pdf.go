package lethetest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// PDF writes a minimal PDF 1.4 file: objs are the objects, numbered from 1
// (the first must be the catalog), then the cross-reference table and the
// trailer; info is the number of the document information object (0:
// none). Test documents for the extractors, with no PDF library.
func PDF(objs []string, info int) []byte {
	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&out, "%010d 00000 n \n", o)
	}
	infoRef := ""
	if info > 0 {
		infoRef = fmt.Sprintf(" /Info %d 0 R", info)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, infoRef, xref)
	return out.Bytes()
}

// ExpandingPDF is a small PDF whose text runs to megabytes, the text
// extractor's equivalent of a zip bomb: pages pages that all show one
// zlib-compressed content stream of the given lines.
func ExpandingPDF(lines []string, pages int) []byte {
	var content bytes.Buffer
	content.WriteString("BT /F1 1 Tf 10 785 Td 1 TL\n")
	for _, l := range lines {
		fmt.Fprintf(&content, "(%s) Tj T*\n", l)
	}
	content.WriteString("ET")
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(content.Bytes())
	zw.Close()
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.String())}
	kids := make([]string, pages)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 5+i)
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>")
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages)
	return PDF(objs, 0)
}
