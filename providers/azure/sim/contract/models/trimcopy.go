package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// manifest is the part of manifest.json the trimming reads.
type manifest struct {
	Operations []struct {
		File, Path, Method string
	} `json:"operations"`
	Prune  []string `json:"prune"`
	Absent []string `json:"absent"`
}

// dropped are the keys of schemas, parameters and operations the trimmed
// copy leaves out: prose, examples and code-generation hints, none of which
// constrains a request or an answer.
var dropped = map[string]bool{
	"description": true, "title": true, "summary": true, "example": true, "examples": true,
	"externalDocs": true, "tags": true, "x-ms-examples": true, "x-ms-identifiers": true,
	"x-ms-client-flatten": true, "x-ms-client-name": true, "x-ms-mutability": true,
	"x-ms-secret": true, "x-ms-azure-resource": true, "x-ms-external": true,
	"x-ms-parameter-location": true, "x-ms-odata": true, "x-typespec-generated": true,
}

// kept are the keys of an operation the trimmed copy keeps.
var kept = map[string]bool{"operationId": true, "parameters": true, "responses": true,
	"x-ms-pageable": true, "x-ms-long-running-operation": true}

// Trim builds the trimmed copy from src, a checkout of azure-rest-api-specs
// (its specification/ tree), for the manifest and documented models of
// out: the manifest's operations of specification/ documents and every
// definition and parameter they and documented/ reach, except the pruned
// and absent ones, cleaned of the dropped keys and of the value lists of
// extensible (modelAsString) enums. It returns file → JSON text.
func Trim(src, out fs.FS) (map[string][]byte, error) {
	b, err := fs.ReadFile(out, "manifest.json")
	if err != nil {
		return nil, err
	}
	var man manifest
	if err := json.Unmarshal(b, &man); err != nil {
		return nil, err
	}
	t := &trimmer{src: src, docs: map[string]map[string]any{}, keep: map[string]map[string]map[string]any{},
		stop: map[string]bool{}, outPaths: map[string]map[string]any{}}
	for _, r := range append(append([]string{}, man.Prune...), man.Absent...) {
		t.stop[r] = true
	}
	for _, op := range man.Operations {
		if !strings.HasPrefix(op.File, "specification/") {
			continue
		}
		doc, err := t.doc(op.File)
		if err != nil {
			return nil, err
		}
		paths, _ := doc["paths"].(map[string]any)
		item, _ := paths[op.Path].(map[string]any)
		node, _ := item[op.Method].(map[string]any)
		if node == nil {
			return nil, fmt.Errorf("%s has no %s %s", op.File, op.Method, op.Path)
		}
		clean := map[string]any{}
		for k, v := range node {
			if kept[k] {
				clean[k] = v
			}
		}
		clean = cleaned(clean).(map[string]any)
		if t.outPaths[op.File] == nil {
			t.outPaths[op.File] = map[string]any{}
		}
		p, _ := t.outPaths[op.File][op.Path].(map[string]any)
		if p == nil {
			p = map[string]any{}
			t.outPaths[op.File][op.Path] = p
		}
		p[op.Method] = clean
		if err := t.follow(op.File, clean); err != nil {
			return nil, err
		}
	}
	err = fs.WalkDir(out, "documented", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		b, err := fs.ReadFile(out, p)
		if err != nil {
			return err
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		return t.follow(p, doc)
	})
	if err != nil {
		return nil, err
	}
	return t.write()
}

type trimmer struct {
	src      fs.FS
	docs     map[string]map[string]any
	keep     map[string]map[string]map[string]any // file → section → name → node
	stop     map[string]bool
	outPaths map[string]map[string]any
}

func (t *trimmer) doc(file string) (map[string]any, error) {
	if d, ok := t.docs[file]; ok {
		return d, nil
	}
	b, err := fs.ReadFile(t.src, file)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var d map[string]any
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	t.docs[file] = d
	return d, nil
}

// follow keeps every definition and parameter node's references reach.
func (t *trimmer) follow(file string, node any) error {
	switch x := node.(type) {
	case map[string]any:
		for k, v := range x {
			if ref, ok := v.(string); ok && k == "$ref" {
				if err := t.ref(file, ref); err != nil {
					return err
				}
				continue
			}
			if err := t.follow(file, v); err != nil {
				return err
			}
		}
	case []any:
		for _, v := range x {
			if err := t.follow(file, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *trimmer) ref(from, ref string) error {
	file, ptr, _ := strings.Cut(ref, "#")
	if file == "" {
		file = from
	} else {
		file = path.Join(path.Dir(from), file)
	}
	key := file + "#" + ptr
	if t.stop[key] || !strings.HasPrefix(file, "specification/") {
		return nil // pruned, absent, or within documented/, which is kept whole
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	if len(parts) != 2 || (parts[0] != "definitions" && parts[0] != "parameters") {
		return fmt.Errorf("%s: only #/definitions/X and #/parameters/X references are kept", key)
	}
	section, name := parts[0], parts[1]
	if t.keep[file][section][name] != nil {
		return nil
	}
	doc, err := t.doc(file)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	sec, _ := doc[section].(map[string]any)
	node, _ := sec[name].(map[string]any)
	if node == nil {
		return fmt.Errorf("%s does not resolve (list it under absent if the source lacks it)", key)
	}
	clean := cleaned(node).(map[string]any)
	if t.keep[file] == nil {
		t.keep[file] = map[string]map[string]any{}
	}
	if t.keep[file][section] == nil {
		t.keep[file][section] = map[string]any{}
	}
	t.keep[file][section][name] = clean
	if err := t.follow(file, clean); err != nil {
		return err
	}
	if _, ok := clean["discriminator"]; ok && section == "definitions" {
		defs, _ := doc["definitions"].(map[string]any)
		for sub, d := range defs {
			dm, _ := d.(map[string]any)
			allOf, _ := dm["allOf"].([]any)
			for _, a := range allOf {
				am, _ := a.(map[string]any)
				if r, _ := am["$ref"].(string); r == "#/definitions/"+name {
					if err := t.ref(file, "#/definitions/"+sub); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// cleaned is a copy of a node without the dropped keys, the value lists of
// x-ms-enum, nor the enum of an extensible enum. The names of a
// properties map are data, never dropped.
func cleaned(v any) any {
	return clean(v, false)
}

func clean(v any, names bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		extensible := false
		if e, ok := x["x-ms-enum"].(map[string]any); ok && e["modelAsString"] == true {
			extensible = true
		}
		for k, y := range x {
			if !names && (dropped[k] || (k == "enum" && extensible)) {
				continue
			}
			switch {
			case !names && k == "x-ms-enum":
				e, _ := y.(map[string]any)
				m := map[string]any{}
				for _, f := range []string{"name", "modelAsString"} {
					if val, ok := e[f]; ok {
						m[f] = val
					}
				}
				out[k] = m
			case !names && (k == "properties" || k == "definitions" || k == "parameters" && isMap(y) || k == "responses" || k == "headers"):
				out[k] = clean(y, true)
			default:
				out[k] = clean(y, false)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = clean(y, false)
		}
		return out
	}
	return v
}

func isMap(v any) bool { _, ok := v.(map[string]any); return ok }

func (t *trimmer) write() (map[string][]byte, error) {
	files := map[string]bool{}
	for f := range t.keep {
		files[f] = true
	}
	for f := range t.outPaths {
		files[f] = true
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	out := map[string][]byte{}
	for _, f := range names {
		src := t.docs[f]
		info, _ := src["info"].(map[string]any)
		doc := map[string]any{"swagger": "2.0", "info": map[string]any{"title": info["title"], "version": info["version"]}}
		doc["paths"] = map[string]any{}
		if p := t.outPaths[f]; p != nil {
			doc["paths"] = p
		}
		for _, sec := range []string{"definitions", "parameters"} {
			if m := t.keep[f][sec]; len(m) > 0 {
				doc[sec] = m
			}
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		out[f] = append(b, '\n')
	}
	return out, nil
}
