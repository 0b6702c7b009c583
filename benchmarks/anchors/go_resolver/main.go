// The Go anchor of benchmarks/resolve_bench.py: what a team might write instead of urnkit's
// resolver, a net/http server that answers GET /{urn} with a 302 to the record's first
// location, read from urnkit's SQLite file. Go's standard library has no SQLite driver and the
// benchmark must build offline, so it calls the system's libsqlite3 through cgo (Debian:
// libsqlite3-dev), one connection and prepared statement per request in flight.
//
//	go build -o go_resolver . && ./go_resolver DATABASE_FILE ADDRESS
package main

/*
#cgo LDFLAGS: -lsqlite3
#include <sqlite3.h>
#include <stdlib.h>
static int bind(sqlite3_stmt *s, _GoString_ key) {
	return sqlite3_bind_text(s, 1, _GoStringPtr(key), _GoStringLen(key), SQLITE_TRANSIENT);
}
*/
import "C"

import (
	"log"
	"net/http"
	"os"
	"strings"
	"unsafe"
)

const query = "SELECT targets FROM records WHERE equivalence_key = ? AND status = 'active'"

type statement struct{ s *C.sqlite3_stmt }

func open(path string) statement {
	var db *C.sqlite3
	name, sql := C.CString(path), C.CString(query)
	defer C.free(unsafe.Pointer(name))
	defer C.free(unsafe.Pointer(sql))
	if C.sqlite3_open_v2(name, &db, C.SQLITE_OPEN_READONLY|C.SQLITE_OPEN_NOMUTEX, nil) != C.SQLITE_OK {
		log.Fatalf("cannot open %s", path)
	}
	var s *C.sqlite3_stmt
	if C.sqlite3_prepare_v2(db, sql, -1, &s, nil) != C.SQLITE_OK {
		log.Fatal(C.GoString(C.sqlite3_errmsg(db)))
	}
	return statement{s}
}

// target is the first location of the record whose equivalence key is key ("" if none).
func (st statement) target(key string) string {
	defer C.sqlite3_reset(st.s)
	C.bind(st.s, key)
	if C.sqlite3_step(st.s) != C.SQLITE_ROW || C.sqlite3_column_type(st.s, 0) == C.SQLITE_NULL {
		return ""
	}
	first, _, _ := strings.Cut(C.GoString((*C.char)(unsafe.Pointer(C.sqlite3_column_text(st.s, 0)))), "\n")
	url, _, _ := strings.Cut(first, "\t")
	return url
}

func main() {
	statements := make(chan statement, 64)
	for i := 0; i < cap(statements); i++ {
		statements <- open(os.Args[1])
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// The equivalence key of a URN:NBN: the whole URN in lower case (RFC 8458 §3).
		key := strings.ToLower(strings.TrimPrefix(r.URL.Path, "/"))
		st := <-statements
		url := st.target(key)
		statements <- st
		if url == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Location", url)
		w.Header().Set("Cache-Control", "max-age=300")
		w.Header().Set("Vary", "Accept")
		w.WriteHeader(http.StatusFound)
	})
	log.Fatal(http.ListenAndServe(os.Args[2], nil))
}
