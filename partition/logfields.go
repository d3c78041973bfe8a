package partition

import (
	"bytes"
	"encoding/json"

	"github.com/rs/zerolog"
)

// withFields returns log with the manager's fields "member" and "root"
// added, except those the caller's logger already carries (a daemon that
// names its member on every line would otherwise print it twice).
func withFields(log zerolog.Logger, member, root string) zerolog.Logger {
	has := loggerFields(log)
	ctx := log.With()
	if !has["member"] {
		ctx = ctx.Str("member", member)
	}
	if !has["root"] {
		ctx = ctx.Str("root", root)
	}
	return ctx.Logger()
}

// loggerFields returns the names of the context fields of log, read from
// one event written to a buffer instead of log's output.
func loggerFields(log zerolog.Logger) map[string]bool {
	var buf bytes.Buffer
	probe := log.Output(&buf)
	probe.Log().Send()
	var fields map[string]json.RawMessage
	if json.Unmarshal(buf.Bytes(), &fields) != nil {
		return nil
	}
	out := make(map[string]bool, len(fields))
	for k := range fields {
		out[k] = true
	}
	return out
}
