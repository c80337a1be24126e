package research

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Why data tables need help: readability keeps a data table and what is
// inside it, but judges the elements around it (DocBook's div.table
// wrapper, the section) by their link density, and a package table whose
// cells are mostly links (package, popcon and size link to the archive)
// makes its whole section "linky": the Debian Reference lost the tables
// naming mkpasswd (ch04) and etckeeper (ch09) that way. Readability.js has
// since learned to keep an element that holds a data table; the Go port
// has not. Until it does, the links of data tables are made to look like
// in-page links (which readability weighs at 0.3) while it runs, and get
// their real targets back after.

// heldHref holds a data table link's real target while readability runs.
const heldHref = "data-lethe-href"

// tableLinkPlaceholder is the in-page target a held link shows readability.
const tableLinkPlaceholder = "#lethe-table-link"

// holdTableLinks gives every link of a data table (isDataTable) the
// placeholder target and keeps its own in heldHref.
func holdTableLinks(root *html.Node) {
	var tables []*html.Node
	collect(root, atom.Table, 0, &tables)
	for _, t := range tables {
		if !isDataTable(t) {
			continue
		}
		var links []*html.Node
		collect(t, atom.A, 0, &links)
		for _, a := range links {
			href := attr(a, "href")
			if href == "" {
				continue
			}
			setAttr(a, "href", tableLinkPlaceholder)
			a.Attr = append(a.Attr, html.Attribute{Key: heldHref, Val: href})
		}
	}
}

// releaseTableLinks gives the held links their targets back.
func releaseTableLinks(n *html.Node) {
	if n.Type == html.ElementNode && n.DataAtom == atom.A {
		if href := attr(n, heldHref); href != "" {
			setAttr(n, "href", href)
			removeAttr(n, heldHref)
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		releaseTableLinks(c)
	}
}

// isDataTable is readability's test of a data table (Readability.js
// _markDataTables), without the nested-table rule (collect does not look
// inside a table): not presentational, and a summary, a caption, a
// header row or column groups, or enough rows and columns.
func isDataTable(t *html.Node) bool {
	if strings.EqualFold(attr(t, "role"), "presentation") || attr(t, "datatable") == "0" {
		return false
	}
	if attr(t, "summary") != "" {
		return true
	}
	for _, a := range []atom.Atom{atom.Caption, atom.Col, atom.Colgroup, atom.Tfoot, atom.Thead, atom.Th} {
		var found []*html.Node
		if collect(t, a, 0, &found); len(found) > 0 {
			return true
		}
	}
	var rows []*html.Node
	collect(t, atom.Tr, 0, &rows)
	cols := 0
	for _, r := range rows {
		n := 0
		for c := r.FirstChild; c != nil; c = c.NextSibling {
			if c.DataAtom == atom.Td || c.DataAtom == atom.Th {
				n++
			}
		}
		cols = max(cols, n)
	}
	switch {
	case len(rows) <= 1 || cols <= 1:
		return false
	case len(rows) >= 10 || cols > 4:
		return true
	}
	return len(rows)*cols > 10
}

func setAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

func removeAttr(n *html.Node, key string) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		if a.Namespace != "" || !strings.EqualFold(a.Key, key) {
			out = append(out, a)
		}
	}
	n.Attr = out
}
