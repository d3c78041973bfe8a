package zxidfence

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Dialect is the SQL flavour a SQL guard speaks. Both support the one
// statement the guard relies on, INSERT … ON CONFLICT … DO UPDATE … WHERE
// (PostgreSQL 9.5+, SQLite 3.24+); they differ in placeholders and the
// binary column type.
type Dialect int

// Supported dialects.
const (
	// Postgres is PostgreSQL ($1, $2, … placeholders; BYTEA values). Use it
	// with github.com/jackc/pgx/v5/stdlib or github.com/lib/pq.
	Postgres Dialect = iota + 1
	// SQLite is SQLite (? placeholders; BLOB values). Use it with
	// modernc.org/sqlite or mattn/go-sqlite3, with a busy timeout so that
	// concurrent writers wait instead of failing with SQLITE_BUSY, e.g. the
	// modernc DSN "file:x.db?_pragma=busy_timeout(10000)&_txlock=immediate".
	SQLite
)

// String returns "postgres" or "sqlite".
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case SQLite:
		return "sqlite"
	}
	return "dialect(" + strconv.Itoa(int(d)) + ")"
}

func (d Dialect) valid() bool { return d == Postgres || d == SQLite }

func (d Dialect) blobType() string {
	if d == Postgres {
		return "BYTEA"
	}
	return "BLOB"
}

// bind replaces each "?" in q with the dialect's n-th placeholder. The
// statements built here contain no "?" in literals.
func (d Dialect) bind(q string) string {
	if d != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// sqlStatements are a SQL guard's statements for one table and dialect.
type sqlStatements struct {
	schema  string // CREATE TABLE IF NOT EXISTS
	write   string // fenced upsert of fence and value: key, gen, token, value
	record  string // fenced upsert of the fence only: key, gen, token
	read    string // generation, token, value of a key
	lock    string // no-op update taking the key's row (or SQLite's write) lock
	nextGen string // upsert moving a key to a generation: key, gen
}

func newStatements(d Dialect, table string) (sqlStatements, error) {
	if !d.valid() {
		return sqlStatements{}, fmt.Errorf("zxidfence: unknown SQL %s", d)
	}
	if !identifier.MatchString(table) {
		return sqlStatements{}, fmt.Errorf("zxidfence: table name %q must be a plain identifier (letters, digits, _)", table)
	}
	t := table
	// A row with generation 0 and token 0 has no fence yet and admits any
	// generation, as the in-memory guard does for an unseen key.
	fenced := fmt.Sprintf(` WHERE (%[1]s.generation = excluded.generation AND %[1]s.fencing_token <= excluded.fencing_token)`+
		` OR (%[1]s.generation = 0 AND %[1]s.fencing_token = 0)`, t)
	return sqlStatements{
		schema: fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	resource_key  TEXT PRIMARY KEY,
	generation    BIGINT NOT NULL DEFAULT 0 CHECK (generation >= 0),
	fencing_token BIGINT NOT NULL DEFAULT 0 CHECK (fencing_token >= 0),
	value         %s
)`, t, d.blobType()),
		write: d.bind(fmt.Sprintf(`INSERT INTO %s (resource_key, generation, fencing_token, value) VALUES (?, ?, ?, ?)`+
			` ON CONFLICT (resource_key) DO UPDATE SET generation = excluded.generation,`+
			` fencing_token = excluded.fencing_token, value = excluded.value`, t) + fenced),
		record: d.bind(fmt.Sprintf(`INSERT INTO %s (resource_key, generation, fencing_token) VALUES (?, ?, ?)`+
			` ON CONFLICT (resource_key) DO UPDATE SET generation = excluded.generation,`+
			` fencing_token = excluded.fencing_token`, t) + fenced),
		read: d.bind(fmt.Sprintf(`SELECT generation, fencing_token, value FROM %s WHERE resource_key = ?`, t)),
		lock: d.bind(fmt.Sprintf(`UPDATE %s SET generation = generation WHERE resource_key = ?`, t)),
		nextGen: d.bind(fmt.Sprintf(`INSERT INTO %[1]s (resource_key, generation, fencing_token) VALUES (?, ?, 0)`+
			` ON CONFLICT (resource_key) DO UPDATE SET generation = excluded.generation, fencing_token = 0`+
			` WHERE %[1]s.generation < excluded.generation`, t)),
	}, nil
}
