package partition

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// Defaults for Config fields left at their zero value.
const (
	// DefaultHandoffTimeout bounds how long a handoff waits for
	// OnStartedLeading to return after its context is cancelled.
	DefaultHandoffTimeout = 10 * time.Second
	// DefaultMaxConcurrentHandoffs is how many balancing handoffs one member
	// runs at a time. A handoff costs a few round trips beyond the user's
	// own drain (the successor check, the resignation; 25 to 100 ms on a
	// loaded ensemble), so a member hands off about this many shards per
	// such time (a drain of 20,000 shards takes seconds: bench/README.md),
	// while at most 64 of its shards at once are between their old
	// leader's cancelled context and their new leader's start.
	DefaultMaxConcurrentHandoffs = 64
	// DefaultMaxInFlight is how many shard elections one member starts at a
	// time (each start is a few pipelined ZooKeeper requests on the shared
	// session).
	DefaultMaxInFlight = 256
	// DefaultRestartGraceFactor times the session's negotiated timeout is
	// the default restart grace.
	DefaultRestartGraceFactor = 2
	// DefaultStartupSettle is how long a starting member waits, by
	// default, for the membership to stop changing before its first
	// elections.
	DefaultStartupSettle = 300 * time.Millisecond
	// MaxMaxInFlight caps Config.MaxInFlight.
	MaxMaxInFlight = 4096
	// MaxWeight caps a member's weight (Config.Weight, Operator.SetWeight).
	MaxWeight = rootdata.MaxWeight
)

// Config configures a Manager. MemberID is required; every other field has
// a documented default.
type Config struct {
	// MemberID names this member among the live members of the root. It
	// must be a valid znode name (see ValidateID) and unique among live
	// members: Run fails with ErrDuplicateMember when another live session,
	// or another Manager on the same session, registered it.
	MemberID string

	// Shards lists the shard ids (valid znode names, see ValidateID, no
	// duplicates). Range builds numbered ids; SetShards changes it at
	// runtime. Give every member of a root the same list: shards are dealt
	// only among live members whose list is the same (each publishes a
	// digest of it), so members that disagree (a rolling change of the
	// list) each lead only shards they run, balanced within their group,
	// and a warning names them. A member with no shards is dealt none.
	Shards []string

	// OnStartedLeading is called in its own goroutine when this member
	// starts leading a shard, with the leadership's fencing token. ctx is
	// cancelled the moment the leadership ends (handoff, stop, session
	// expiry, connection loss); the function should then stop its work and
	// return. It may return earlier; the leadership continues.
	// recipe.LeadershipFrom(ctx) returns the leadership, whose Znode and
	// Version zxidfence's ZooKeeper guard checks (zxidfence.LeaderOf).
	// Optional.
	OnStartedLeading func(ctx context.Context, shard string, token zxidfence.Token)

	// OnStoppedLeading is called once for every OnStartedLeading, after
	// that call has returned (or HandoffTimeout passed), with the reason:
	// ErrHandoff, ErrWithdrawn, ErrShardRemoved, ErrStopping, or a recipe reason such as
	// recipe.ErrSessionExpired (also after a pause past the session
	// timeout: a leadership lost while the session may have expired waits,
	// at most HandoffTimeout, for recipe's Leadership.Reason). On a handoff it returns before this
	// member's znode is deleted, so the next leader's OnStartedLeading never
	// overlaps it (ErrWithdrawn likewise). It runs on the shard's own goroutine and should return
	// promptly. It is NOT bounded by HandoffTimeout: a handoff, a stop and
	// Run's return wait for it however long it takes, and meanwhile (on a
	// handoff or a stop) this member's znode stays first, so no other
	// member can lead the shard: a blocked OnStoppedLeading keeps the shard
	// unled. Optional.
	OnStoppedLeading func(shard string, reason error)

	// OnLeaderChanged, for routing requests to the shards' leaders, is
	// called whenever the leader of a shard under the root changes as the
	// members' records publish it: with the shard, the leading member and
	// its fencing token, or "" and 0 when the shard lost its leader (shards
	// start without one, so the first calls report the leaders already
	// published). The records lag the elections by up to the publish
	// interval (50ms) plus a write, and a leadership ends before its record
	// says so: this is advice for routing, not a safety signal (the fencing
	// token, checked by a zxidfence guard, is). Calls are made in order,
	// one at a time, on a goroutine of the Manager's that never holds up
	// the elections: when the callback is slower than the changes,
	// intermediate states are skipped and the latest is delivered. A
	// shard's token never goes down within one Run (see WatchLeaders: a
	// lagging record's older claim is not reported). It is never called
	// after Run returns (Run waits for a call in progress). WatchLeaders
	// gives the same to processes that are not members.
	// Optional.
	OnLeaderChanged func(shard, member string, token zxidfence.Token)

	// HandoffTimeout bounds, per shard, how long a handoff or a stop waits
	// for OnStartedLeading to return after its ctx was cancelled before it
	// resigns anyway, and how long a handoff waits for the target member's
	// candidate to join the shard's election before it is deferred (the
	// shard stays led here, and is handed off later). Zero selects
	// DefaultHandoffTimeout (10s); negative is invalid.
	HandoffTimeout time.Duration

	// MaxConcurrentHandoffs caps the balancing handoffs this member runs at
	// once: the shards it has in transition (their work cancelled and
	// draining, or their successor not started yet). A finished handoff is
	// followed by the next at once. Lower it when OnStartedLeading drains
	// slowly and fewer shards may pause at a time; a drain then takes
	// longer. Taking over shards whose leader died is never throttled. Zero
	// selects DefaultMaxConcurrentHandoffs (64); negative is invalid.
	MaxConcurrentHandoffs int

	// MaxInFlight caps how many shard elections this member starts at once
	// on each of its sessions, so thousands of shards are pipelined without
	// flooding the server. Within the cap each session adapts the number to
	// how promptly ZooKeeper answers it (Session.AnswerLag): it starts at 32,
	// grows by one per election started while answers come within an
	// eighth of the session timeout, and halves when they lag by more than
	// a quarter (TCP's additive increase, multiplicative decrease), so a slow
	// server or link is not handed a line of requests longer than the lease
	// allows. Zero selects DefaultMaxInFlight (256); it must not exceed
	// MaxMaxInFlight.
	MaxInFlight int

	// RestartGrace is how long the shards of a member that left (crashed,
	// stopped, or lost its session) stay reserved for it: they are led by
	// others meanwhile, and given back if it registers again within the
	// grace, without moving anybody else's shards. After the grace the
	// members leading them meanwhile keep them. Each member applies its own value to the members it
	// sees leave, so give every member the same. Zero selects
	// DefaultRestartGraceFactor (2) times the session's negotiated timeout;
	// a negative value disables the grace.
	RestartGrace time.Duration

	// StartupSettle is how long Run waits, before its first elections, for
	// the set of live members to stay unchanged (at most 4 x StartupSettle
	// in all). Members started together then divide the shards at once,
	// instead of the first one up campaigning for every shard and handing
	// most of them off (the same idea as Kafka's
	// group.initial.rebalance.delay.ms, default 3 s there). Every Run
	// waits, a restart too; shards that others lead meanwhile (a restarting
	// member's, within its restart grace) stay led. Zero selects
	// DefaultStartupSettle (300ms); a negative value disables the wait.
	// Raise it to a few seconds when members start further apart.
	StartupSettle time.Duration

	// ExpectedMembers, when positive, is how many members the fleet runs
	// (a StatefulSet's replicas, say): the startup wait ends as soon as
	// that many members are live, instead of once the membership has been
	// still for StartupSettle, so members started together begin their
	// elections the moment the last of them registers. Only members
	// running the same shard list count (a member of another list, whose
	// shards are dealt apart, does not). With fewer live
	// members the wait is StartupSettle's, as without it; more members
	// than expected do no harm (the balance hands shards over as when a
	// member joins). The same pairing as Elasticsearch's
	// gateway.expected_data_nodes beside gateway.recover_after_time. Zero
	// (the default) leaves the wait to StartupSettle; a negative value is
	// refused with a *ConfigError.
	ExpectedMembers int

	// ACL is the ACL of every znode the manager creates: the root (its
	// missing ancestors get recipe.SharedParentACL(ACL), a level other
	// groups may share), members/, owners/, shards/, each shard's election
	// znode, the operator znode, the member's registration and record, and
	// its candidates' znodes. Nil selects zk.WorldACL(zk.PermAll) (anyone
	// may change anything); recipe.GroupACL() lets only the group's
	// identity change or delete them while anyone may read, on a session
	// with credentials (recipe.WithDigestAuth, recipe.WithSASL) that every
	// member shares. A member without them is then refused at Run with
	// recipe.ErrACLDenied. znodes that exist already keep their ACL; with
	// a secured ACL, Run first reads the ACL of the root, its parent, its
	// three children, the operator znode, and each shard election and
	// member record that exists, and refuses one that others may delete
	// or change (see ACLCheck). A non-nil empty ACL is invalid.
	ACL []zk.ACL

	// ACLCheck says what Run does when, with a secured ACL, the root, its
	// parent, members/, owners/, shards/, the operator znode, a shard
	// election (shards/<id>) or a member record (owners/<id>) lets
	// identities outside ACL delete or change it (recipe.CheckACL: a root
	// squatted open before the first start, or one an earlier open release
	// made and setAcl secured only in part): recipe.ACLCheckRefuse (the
	// zero value) fails Run with an error wrapping a
	// *recipe.UnsafeACLError; recipe.ACLCheckWarn logs it and runs;
	// recipe.ACLCheckOff does not read the ACLs.
	ACLCheck recipe.ACLCheck

	// MaxShardsPerSession bounds the shard elections (leading or standing
	// by) one ZooKeeper session carries. A member with more spreads them
	// over sessions of its own (recipe.Session.Sibling of the session
	// given to NewManager, opened as needed, closed when Run returns), each
	// with its own lease: one member, one id, one record and one set of
	// callbacks, and a session that expires ends only its own shards'
	// leaderships. The bound keeps each session's closeSession transaction
	// (every ephemeral's path) within JuteMaxBuffer: above about twice
	// that, ZooKeeper servers cannot read the transaction back
	// (ZOOKEEPER-4306) and fail to load their database. Zero selects
	// DefaultMaxShardsPerSession (5,000), or fewer when the election paths
	// are too long for that: a session's transaction is 84 bytes plus 4 +
	// the path per ephemeral (CloseSessionBytes), a shard's path
	// <root>/buckets/<bucket>/<id>/ and a 38-byte candidate name, 70
	// bytes in all under "/zkelect" with 6-character ids and 1,024
	// buckets (65 in a flat root an older release made, <root>/shards/<id>/),
	// so 5,000 shards write 350,084 bytes. The member znode counts as one of the first session's.
	// NewManager refuses a value whose sessions would exceed JuteMaxBuffer
	// with a *ConfigError wrapping a *LimitError (errors.Is ErrOverLimit).
	MaxShardsPerSession int

	// JuteMaxBuffer is the servers' and clients' jute.maxbuffer, in bytes.
	// It bounds one session's closeSession transaction (see
	// MaxShardsPerSession) and every listing of the shards' elections: a
	// shard list whose fullest getChildren reply would exceed it (a
	// bucket's, in a root with buckets; all of <root>/shards in a flat
	// root an older release made, ListingBytes) is refused by NewManager
	// and SetShards, and by Run once it has read the root's layout (a
	// *ConfigError wrapping a *LimitError that states the arithmetic).
	// Zero selects DefaultJuteMaxBuffer (1,048,575, ZooKeeper's default);
	// set it only to the value every server and client of the ensemble
	// runs with.
	JuteMaxBuffer int

	// Address is where this member serves requests for the shards it
	// leads (host:port, a URL: free-form, at most 1 KiB of UTF-8 without
	// control or format characters, which terminals would act on). It is published
	// in the member's record, so that Owners, WatchCluster and the daemon's
	// /v1/owners tell routers where each shard's leader is. Optional.
	Address string

	// Labels are free-form key/value pairs published with the member
	// (zone, rack, version), shown by Owners and WatchCluster: at most 32,
	// keys of 1-64 bytes, values of at most 256, UTF-8 without control or
	// format characters. Optional.
	Labels map[string]string

	// Weight sets this member's share of the shards relative to the
	// others': in steady state no member leads more than
	// ceil(S·wᵢ/Σw) of S shards (Kafka's and Helix's capacity weights do
	// the same). An operator's weight (Operator.SetWeight) overrides it.
	// Zero selects 1; it must not be negative nor exceed MaxWeight.
	Weight int

	// Logger receives the manager's logs, with the fields "member",
	// "root", "shard", "token" and "reason" ("member" and "root" are not
	// added again when the Logger already has them). The zero Logger
	// selects the session's.
	Logger zerolog.Logger

	// Metrics registers the manager's Prometheus collectors (prefix
	// zkelect_partition_, const labels root and member). Nil selects the
	// session's Registerer; if that is nil too, no metrics are kept.
	Metrics prometheus.Registerer
}

// settings is a validated Config with defaults applied.
type settings struct {
	Config
	shards []string
}

// validate checks c for a Manager under root and applies defaults;
// sessionTimeout sizes the default restart grace.
func (c Config) validate(root string, sessionTimeout time.Duration) (settings, error) {
	if c.MemberID == "" {
		return settings{}, &ConfigError{Field: "MemberID", Reason: "is empty"}
	}
	if err := ValidateID(c.MemberID); err != nil {
		return settings{}, &ConfigError{Field: "MemberID", Reason: "is not a valid znode name", Err: err}
	}
	if err := rootdata.ValidateShards(c.Shards); err != nil {
		return settings{}, &ConfigError{Field: "Shards", Reason: "has an invalid id", Err: err}
	}
	if c.HandoffTimeout < 0 {
		return settings{}, &ConfigError{Field: "HandoffTimeout", Reason: fmt.Sprintf("is negative (%v)", c.HandoffTimeout)}
	}
	if c.MaxConcurrentHandoffs < 0 {
		return settings{}, &ConfigError{Field: "MaxConcurrentHandoffs", Reason: fmt.Sprintf("is negative (%d)", c.MaxConcurrentHandoffs)}
	}
	if c.MaxInFlight < 0 || c.MaxInFlight > MaxMaxInFlight {
		return settings{}, &ConfigError{Field: "MaxInFlight", Reason: fmt.Sprintf("is %d, want 0..%d", c.MaxInFlight, MaxMaxInFlight)}
	}
	if c.ACL != nil && len(c.ACL) == 0 {
		return settings{}, &ConfigError{Field: "ACL", Reason: "is empty (nil selects the open default)"}
	}
	if c.ACLCheck < recipe.ACLCheckRefuse || c.ACLCheck > recipe.ACLCheckOff {
		return settings{}, &ConfigError{Field: "ACLCheck", Reason: fmt.Sprintf("is %d, not a recipe.ACLCheck", c.ACLCheck)}
	}
	if c.MaxShardsPerSession < 0 {
		return settings{}, &ConfigError{Field: "MaxShardsPerSession", Reason: fmt.Sprintf("is negative (%d)", c.MaxShardsPerSession)}
	}
	if c.ExpectedMembers < 0 {
		return settings{}, &ConfigError{Field: "ExpectedMembers", Reason: fmt.Sprintf("is negative (%d)", c.ExpectedMembers)}
	}
	if c.JuteMaxBuffer < 0 {
		return settings{}, &ConfigError{Field: "JuteMaxBuffer", Reason: fmt.Sprintf("is negative (%d)", c.JuteMaxBuffer)}
	}
	if c.Weight < 0 || c.Weight > MaxWeight {
		return settings{}, &ConfigError{Field: "Weight", Reason: fmt.Sprintf("is %d, want 0..%d", c.Weight, MaxWeight)}
	}
	if err := rootdata.ValidateAddress(c.Address); err != nil {
		return settings{}, &ConfigError{Field: "Address", Reason: err.Error()}
	}
	if err := rootdata.ValidateLabels(c.Labels); err != nil {
		return settings{}, &ConfigError{Field: "Labels", Reason: err.Error()}
	}
	s := settings{Config: c, shards: append([]string(nil), c.Shards...)}
	if s.Weight == 0 {
		s.Weight = 1
	}
	if s.ACL == nil {
		s.ACL = zk.WorldACL(zk.PermAll)
	}
	if s.JuteMaxBuffer == 0 {
		s.JuteMaxBuffer = DefaultJuteMaxBuffer
	}
	perSession, err := rootdata.NewRootLayout.SessionCap(root, c.MemberID, s.shards, c.MaxShardsPerSession, s.JuteMaxBuffer)
	if err != nil {
		return settings{}, &ConfigError{Field: "MaxShardsPerSession", Reason: "is over ZooKeeper's limit", Err: err}
	}
	s.MaxShardsPerSession = perSession
	if err := rootdata.NewRootLayout.CheckListing(s.shards, s.JuteMaxBuffer); err != nil {
		return settings{}, &ConfigError{Field: "Shards", Reason: "is over ZooKeeper's limit", Err: err}
	}
	if s.HandoffTimeout == 0 {
		s.HandoffTimeout = DefaultHandoffTimeout
	}
	if s.MaxConcurrentHandoffs == 0 {
		s.MaxConcurrentHandoffs = DefaultMaxConcurrentHandoffs
	}
	if s.MaxInFlight == 0 {
		s.MaxInFlight = DefaultMaxInFlight
	}
	if s.StartupSettle == 0 {
		s.StartupSettle = DefaultStartupSettle
	}
	if s.RestartGrace == 0 {
		s.RestartGrace = DefaultRestartGraceFactor * sessionTimeout
	}
	return s, nil
}

// isZeroLogger reports whether l is the zero zerolog.Logger.
func isZeroLogger(l zerolog.Logger) bool { return reflect.ValueOf(l).IsZero() }
