package chaos

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
)

// tailer follows history files as they grow and keeps the records that
// make acting intervals (acquire, release, crash), so the harness can ask
// who leads without decoding every write again.
type tailer struct {
	offsets map[string]int64
	recs    []Record
}

func newTailer() *tailer { return &tailer{offsets: map[string]int64{}} }

// leading reads what the files gained since the last call and returns the
// acting terms per shard.
func (t *tailer) leading(files []string) (map[string]int, error) {
	for _, f := range files {
		if err := t.read(f); err != nil {
			return nil, err
		}
	}
	SortRecords(t.recs)
	return Leading(t.recs), nil
}

func (t *tailer) read(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil // a member that has not written yet
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(t.offsets[path], io.SeekStart); err != nil {
		return err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	end := bytes.LastIndexByte(b, '\n') + 1 // complete lines only
	t.offsets[path] += int64(end)
	for _, line := range bytes.Split(b[:end], []byte{'\n'}) {
		if len(line) == 0 || bytes.Contains(line, []byte(`"kind":"write"`)) {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		switch r.Kind {
		case KindAcquire, KindRelease, KindCrash:
			t.recs = append(t.recs, r)
		}
	}
	return nil
}
