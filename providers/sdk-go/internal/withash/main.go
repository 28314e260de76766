// Command withash prints the hash of the SDK's WIT (the directory given,
// symbolic links followed), which scripts/regen-go-bindings.sh records in
// internal/wit/WIT_SHA256 when it generates the bindings; this package's
// test fails when the WIT has changed since, so that stale bindings are
// never built into a provider.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: withash WIT-DIR")
		os.Exit(2)
	}
	sum, err := hashTree(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "withash:", err)
		os.Exit(1)
	}
	fmt.Println(sum)
}

// hashTree is the SHA-256, in hex, of every .wit file under dir: its path
// relative to dir and its content, in path order.
func hashTree(dir string) (string, error) {
	var files []string
	err := walk(dir, "", &files)
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		h.Write(data)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// walk lists the .wit files under dir/rel, following symbolic links (the
// SDK links cairn's own wit/provider.wit), which filepath.WalkDir does not.
func walk(dir, rel string, files *[]string) error {
	entries, err := os.ReadDir(filepath.Join(dir, rel))
	if err != nil {
		return err
	}
	for _, e := range entries {
		path := filepath.Join(rel, e.Name())
		info, err := os.Stat(filepath.Join(dir, path))
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			if err := walk(dir, path, files); err != nil {
				return err
			}
		case info.Mode().IsRegular() && filepath.Ext(path) == ".wit":
			*files = append(*files, path)
		}
	}
	return nil
}
