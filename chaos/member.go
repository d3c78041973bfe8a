package chaos

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// Member roles.
const (
	// RoleSingle campaigns in the one recipe election SingleShard.
	RoleSingle = "single"
	// RoleShards runs a partition.Manager over MemberConfig.Shards shards.
	RoleShards = "shards"
)

// SingleShard is the name under which single-election terms are recorded.
const SingleShard = "single"

// MemberConfig configures one chaos member process. It travels to the
// process as JSON (MemberEnv).
type MemberConfig struct {
	Member         string        `json:"member"`
	Role           string        `json:"role"`
	Servers        []string      `json:"servers"` // usually the member's proxy
	Root           string        `json:"root"`    // e.g. "/chaos"
	Shards         int           `json:"shards"`  // RoleShards: shard ids 0..Shards-1
	SessionTimeout time.Duration `json:"session_timeout"`
	WriteEvery     time.Duration `json:"write_every"`
	History        string        `json:"history"` // history file, appended to
	Log            string        `json:"log"`     // zerolog JSON log of the member's sessions, appended to
	SQLite         string        `json:"sqlite"`  // database file shared by all members
}

// MemberEnv is the environment variable that carries a MemberConfig to a
// re-executed test binary.
const MemberEnv = "ZKELECT_CHAOS_MEMBER"

// Paths under MemberConfig.Root.
func singlePath(root string) string { return root + "/single" }

// PartitionRoot is the partition manager's root under a chaos root.
func PartitionRoot(root string) string { return root + "/p" }

// DataDir is the parent of the ZooKeeper guard's target znodes.
func DataDir(root string) string { return root + "/data" }

// SQLiteDSN is the modernc.org/sqlite DSN for a database file shared by
// several processes: writers wait (busy timeout) instead of failing.
func SQLiteDSN(path string) string {
	return "file:" + path + "?_pragma=busy_timeout(20000)&_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)"
}

// ParseMemberConfig decodes a MemberConfig from MemberEnv's JSON value.
func ParseMemberConfig(s string) (MemberConfig, error) {
	var c MemberConfig
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return c, fmt.Errorf("chaos: member config: %w", err)
	}
	if c.Member == "" || (c.Role != RoleSingle && c.Role != RoleShards) || len(c.Servers) == 0 {
		return c, fmt.Errorf("chaos: member config needs member, role (single|shards) and servers: %s", s)
	}
	return c, nil
}

// RunMember runs one chaos member until ctx ends: it campaigns (single
// election or partition manager), and while leading writes to the fenced
// resources, recording everything in cfg.History. On return everything it
// started has stopped; a goroutine still running then is recorded as a
// KindLeftover and reported as an error.
func RunMember(ctx context.Context, cfg MemberConfig) error {
	rec, err := OpenRecorder(cfg.History)
	if err != nil {
		return err
	}
	defer rec.Close()
	if err := runMember(ctx, cfg, rec); err != nil && ctx.Err() == nil {
		return err
	}
	if err := goleak.Find(); err != nil {
		_ = rec.Record(Record{Kind: KindLeftover, Member: cfg.Member, Detail: "goroutines: " + err.Error()})
		return fmt.Errorf("chaos: member %s leaked goroutines: %w", cfg.Member, err)
	}
	return nil
}

func runMember(ctx context.Context, cfg MemberConfig, rec *Recorder) error {
	logger := zerolog.Nop()
	if cfg.Log != "" {
		f, err := os.OpenFile(cfg.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("chaos: open member log: %w", err)
		}
		defer f.Close()
		logger = zerolog.New(f).With().Timestamp().Str("member", cfg.Member).Logger()
	}
	db, err := sql.Open("sqlite", SQLiteDSN(cfg.SQLite))
	if err != nil {
		return fmt.Errorf("chaos: open %s: %w", cfg.SQLite, err)
	}
	defer db.Close()
	sqlGuard, err := zxidfence.NewSQL(db, zxidfence.SQLite)
	if err != nil {
		return fmt.Errorf("chaos: sql guard: %w", err)
	}
	sess, err := connect(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer sess.Close()
	zkGuard, err := zxidfence.NewZooKeeperSession(sess)
	if err != nil {
		return fmt.Errorf("chaos: zookeeper guard: %w", err)
	}
	g := &guards{sql: sqlGuard, zk: zkGuard, dataDir: DataDir(cfg.Root)}
	if cfg.Role == RoleSingle {
		return runSingle(ctx, cfg, sess, rec, g)
	}
	return runShards(ctx, cfg, sess, rec, g)
}

// connect opens the member's session, retrying while the servers cannot be
// reached (a fault may be in force when a member restarts).
func connect(ctx context.Context, cfg MemberConfig, logger zerolog.Logger) (*recipe.Session, error) {
	for {
		s, err := recipe.Connect(ctx, cfg.Servers, recipe.WithSessionTimeout(cfg.SessionTimeout),
			recipe.WithConnectTimeout(2*cfg.SessionTimeout), recipe.WithLogger(logger))
		switch {
		case err == nil:
			return s, nil
		case errors.Is(err, recipe.ErrUnreachable) && ctx.Err() == nil:
			continue // each attempt already waited the connect timeout
		default:
			return nil, fmt.Errorf("chaos: connect: %w", err)
		}
	}
}

// runSingle campaigns in the single election until ctx ends.
func runSingle(ctx context.Context, cfg MemberConfig, sess *recipe.Session, rec *Recorder, g *guards) error {
	cand, err := recipe.NewCandidate(sess, singlePath(cfg.Root), recipe.WithParticipantID(cfg.Member))
	if err != nil {
		return fmt.Errorf("chaos: candidate: %w", err)
	}
	defer cand.Close()
	err = recipe.Run(ctx, cand, func(lctx context.Context, token zxidfence.Token) error {
		l := cand.Leadership()
		if l == nil || l.Token() != token {
			<-lctx.Done() // already over; Run campaigns again
			return nil
		}
		actAsLeader(lctx, rec, g, writerTerm{member: cfg.Member, shard: SingleShard,
			leader: zxidfence.LeaderOf(l, 0)}, cfg.WriteEvery)
		return nil
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("chaos: single election: %w", err)
	}
	return nil
}

// runShards runs a partition manager until ctx ends, starting it again
// while a previous incarnation's session still holds the member id.
func runShards(ctx context.Context, cfg MemberConfig, sess *recipe.Session, rec *Recorder, g *guards) error {
	root := PartitionRoot(cfg.Root)
	pc := partition.Config{
		MemberID: cfg.Member,
		Shards:   partition.Range(0, cfg.Shards),
		OnStartedLeading: func(lctx context.Context, shard string, token zxidfence.Token) {
			election, err := partition.ElectionPath(lctx, sess, root, shard)
			if err != nil {
				election = root + "/shards/" + shard // not found below: reported
			}
			znode, ok := electionZnode(lctx, sess, election, token)
			if !ok {
				fmt.Printf("member %s: shard %s token %s: no election znode with that czxid (leadership over: %v)\n",
					cfg.Member, shard, token, lctx.Err())
				<-lctx.Done()
				return
			}
			leader := zxidfence.Leader{Znode: znode, Version: -1, Fence: zxidfence.At(token)}
			actAsLeader(lctx, rec, g, writerTerm{member: cfg.Member, shard: shard, leader: leader}, cfg.WriteEvery)
		},
		OnStoppedLeading: func(shard string, reason error) {
			_ = rec.Record(Record{Kind: KindNote, Member: cfg.Member, Shard: shard, Detail: "stopped leading: " + reason.Error()})
		},
		HandoffTimeout: 2 * cfg.WriteEvery,
	}
	for {
		m, err := partition.NewManager(sess, root, pc)
		if err != nil {
			return fmt.Errorf("chaos: partition manager: %w", err)
		}
		err = m.Run(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, recipe.ErrSessionClosed):
			return fmt.Errorf("chaos: partition manager: %w", err)
		case !errors.Is(err, partition.ErrDuplicateMember):
			// Not expected of Run; record it and run the member again,
			// as a supervisor would.
			_ = rec.Record(Record{Kind: KindMemberError, Member: cfg.Member, Detail: err.Error()})
		}
		// ErrDuplicateMember: our previous incarnation's session has not
		// expired yet.
		if !retry.Sleep(ctx, cfg.SessionTimeout/4) {
			return nil
		}
	}
}

// electionZnode finds the election znode whose czxid is token: the
// partition manager hands out the token, the ZooKeeper guard also needs the
// znode it must check. It retries read errors until ctx ends; ok is false
// when the znode is gone (the leadership is over) or ctx ended.
func electionZnode(ctx context.Context, sess *recipe.Session, path string, token zxidfence.Token) (string, bool) {
	znode, found := "", false
	err := retry.Do(ctx, func() (bool, error) {
		ps, err := recipe.Participants(ctx, sess, path)
		if err != nil {
			return false, err
		}
		for _, p := range ps {
			if p.Token == token {
				znode, found = p.Znode, true
			}
		}
		return true, nil
	})
	return znode, err == nil && found
}
