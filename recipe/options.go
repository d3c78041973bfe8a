package recipe

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/zkconn"
)

// Defaults, used when an option is not given.
const (
	// DefaultSessionTimeout is the session timeout requested from the
	// server. The server clamps it to 2..20 ticks; the negotiated value is
	// what every deadline of the recipe uses.
	DefaultSessionTimeout = 10 * time.Second
	// DefaultConnectTimeout bounds Connect's wait for the first session:
	// long enough for a service started beside its ensemble (a ZooKeeper
	// JVM starting and electing its leader). The zkelect CLI's
	// --connect-timeout defaults to 5s instead: its commands fail fast
	// and its daemons are restarted by their supervisors.
	DefaultConnectTimeout = 15 * time.Second
	// DefaultCloseTimeout bounds Candidate.Close's wait for the deletion of
	// its znode, whatever the caller's context.
	DefaultCloseTimeout = 10 * time.Second
	// defaultLeaseFraction sets the local lease margin of EndOnSuspend:
	// a quarter of the negotiated session timeout.
	defaultLeaseFraction = 4
)

// SessionOption configures Connect. A nil SessionOption is ignored.
type SessionOption func(*sessionConfig) error

type sessionConfig struct {
	timeout        time.Duration
	connectTimeout time.Duration
	exactTimeout   bool
	log            zerolog.Logger
	reg            prometheus.Registerer
	dialer         zk.Dialer
	customDialer   bool // WithDialer: the watchdog does not take the session
	auth           []authCred
	tls            *tls.Config            // nil: plain TCP
	sasl           *zkconn.SASLCredential // nil: no SASL exchange
	noTracking     bool                   // WithEnsembleTracking(false)
}

type authCred struct{ scheme, auth string }

func defaultSessionConfig() sessionConfig {
	return sessionConfig{
		timeout:        DefaultSessionTimeout,
		connectTimeout: DefaultConnectTimeout,
		log:            zerolog.Nop(),
		dialer:         net.DialTimeout,
	}
}

// WithSessionTimeout sets the session timeout to request (default
// DefaultSessionTimeout). It must be positive and at most 24h. The server
// may grant another value (it clamps to 2..20 of its ticks); Session.Timeout
// reports the granted one, which all deadlines use.
func WithSessionTimeout(d time.Duration) SessionOption {
	return func(c *sessionConfig) error {
		if d <= 0 || d > 24*time.Hour {
			return fmt.Errorf("%w: WithSessionTimeout(%v): must be in (0, 24h]", ErrSessionTimeout, d)
		}
		c.timeout = d
		return nil
	}
}

// WithExactSessionTimeout makes Connect fail with a *SessionTimeoutError
// (errors.Is ErrSessionTimeout) when the server grants a session timeout
// other than the requested one, instead of logging a warning.
func WithExactSessionTimeout() SessionOption {
	return func(c *sessionConfig) error { c.exactTimeout = true; return nil }
}

// WithConnectTimeout bounds how long Connect waits for the first session
// (default DefaultConnectTimeout); past it Connect fails with an error
// wrapping ErrUnreachable, up to about 1s later (go-zookeeper's Close
// waits that long for a close request no server can answer). The caller's
// context can end the wait earlier.
func WithConnectTimeout(d time.Duration) SessionOption {
	return func(c *sessionConfig) error {
		if d <= 0 {
			return &OptionError{Option: "WithConnectTimeout", Reason: fmt.Sprintf("%v is not positive", d)}
		}
		c.connectTimeout = d
		return nil
	}
}

// WithLogger sets the zerolog logger (default: none). State changes are
// logged at info/warn level with the fields election, znode, token,
// session_id and reason; nothing is logged per heartbeat above debug.
func WithLogger(l zerolog.Logger) SessionOption {
	return func(c *sessionConfig) error { c.log = l; return nil }
}

// WithMetrics registers the recipe's Prometheus collectors (zkelect_*) on r.
// Without it no metric is recorded. Several sessions may share r.
func WithMetrics(r prometheus.Registerer) SessionOption {
	return func(c *sessionConfig) error { c.reg = r; return nil }
}

// WithDialer sets how TCP connections to servers are made (default
// net.DialTimeout). It is given an address "ip:port": the session resolves
// each server name itself at each attempt and tries its addresses in turn.
// The recipe wraps every connection it returns to bound the handshake and
// to track answered requests.
func WithDialer(d zk.Dialer) SessionOption {
	return func(c *sessionConfig) error {
		if d == nil {
			return &OptionError{Option: "WithDialer", Reason: "nil dialer"}
		}
		c.dialer, c.customDialer = d, true
		return nil
	}
}

// WithDigestAuth authenticates the session with ZooKeeper's digest scheme
// as user:password (re-sent on every reconnect). Combine with WithACL, for
// example zk.DigestACL(zk.PermAll, user, password), so that other clients
// cannot delete the candidates' znodes.
func WithDigestAuth(user, password string) SessionOption {
	return func(c *sessionConfig) error {
		if user == "" {
			return &OptionError{Option: "WithDigestAuth", Reason: "empty user"}
		}
		c.auth = append(c.auth, authCred{scheme: "digest", auth: user + ":" + password})
		return nil
	}
}

// WithTLS connects to the servers' secure client port (ZooKeeper's
// secureClientPort, served by its Netty connection factory) over TLS with
// cfg, on each connection the dialer (WithDialer) returns. The server's
// certificate is verified against cfg.RootCAs (the system's roots when
// nil) and for cfg.ServerName, or, when that is empty, for the host of the
// address dialed; a client certificate is presented when cfg has one
// (cfg.Certificates or GetClientCertificate), as servers with
// ssl.clientAuth=need require. A nil cfg, or one with InsecureSkipVerify,
// is refused with a *OptionError. A failed handshake is a *TLSError; when
// every server fails it for a reason of certificates, Connect fails with
// it at once (errors.Is ErrTLS and ErrUnreachable).
func WithTLS(cfg *tls.Config) SessionOption {
	return func(c *sessionConfig) error {
		switch {
		case cfg == nil:
			return &OptionError{Option: "WithTLS", Reason: "nil config"}
		case cfg.InsecureSkipVerify:
			return &OptionError{Option: "WithTLS", Reason: "InsecureSkipVerify accepts any server; give RootCAs instead"}
		}
		c.tls = cfg.Clone()
		return nil
	}
}

// WithSASL authenticates every connection with SASL DIGEST-MD5 (RFC 2831)
// as user with password, against ZooKeeper's SASLAuthenticationProvider
// and a JAAS DigestLoginModule holding user_<user>="<password>". The
// exchange runs after each connect (and reconnect) before any other
// request, and the session's identity is then sasl:<user> (for ACLs:
// zk.ACL{Scheme: "sasl", ID: user} or GroupACL). Wrong credentials, a user
// the server does not know or a server without SASL end Connect at once
// with an *AuthError (errors.Is ErrAuthFailed); after Connect they end the
// session. GSSAPI (Kerberos) is not supported. An empty user or password
// is refused with a *OptionError.
func WithSASL(user, password string) SessionOption {
	return func(c *sessionConfig) error {
		if user == "" || password == "" {
			return &OptionError{Option: "WithSASL", Reason: "empty user or password"}
		}
		c.sasl = &zkconn.SASLCredential{User: user, Password: password}
		return nil
	}
}

// WithEnsembleTracking sets whether the session follows the ensemble's
// dynamic configuration (/zookeeper/config, ZooKeeper 3.5+), as Curator's
// EnsembleTracker does; on by default. Followed, the members named there
// are added to the servers given, never in their place: a member the
// client cannot reach is tried under a short bound and dropped, servers a
// reconfiguration added are found, removed ones are not dialled again.
//
// Turn it off when the client reaches the ensemble only through the
// addresses it was given (a load balancer, a Kubernetes Service or
// NodePort, NAT, a port-forward) while the configuration names pod or
// private addresses, or when the configuration's writers are not trusted
// to send the client elsewhere: /zookeeper/config is written by reconfig,
// which ZooKeeper allows only with reconfigEnabled=true and only to its
// superuser (or users it skips ACL checks for), and a member named there
// is dialled in plain TCP with the session's credentials. With WithTLS the
// configuration is never followed (it names the plain client ports), so
// TLS verifies only the servers given.
func WithEnsembleTracking(on bool) SessionOption {
	return func(c *sessionConfig) error { c.noTracking = !on; return nil }
}

// CandidateOption configures NewCandidate. A nil CandidateOption is
// ignored.
type CandidateOption func(*candidateConfig) error

// candidateConfig is held by every candidate: its small fields sit
// together at the end, so that they pay no padding.
type candidateConfig struct {
	id           string
	acl          []zk.ACL
	policy       ConnectionLossPolicy
	closeTimeout time.Duration
	metricsLabel string // the election label of its metrics; "" means its path
	onWaiting    func() // WithOnWaiting's; nil without it
	naming       Naming
	batched      bool // creates ride in the session's batched multis
	newElection  bool // the first create makes the election's znode too
	aclCheck     ACLCheck
}

func defaultCandidateConfig() candidateConfig {
	host, _ := os.Hostname()
	return candidateConfig{
		id:           host + ":" + strconv.Itoa(os.Getpid()),
		naming:       CuratorNaming(),
		acl:          zk.WorldACL(zk.PermAll),
		closeTimeout: DefaultCloseTimeout,
	}
}

// WithBatchedCreates sends the candidate's znode creates in multi
// transactions shared with the other candidates of its Session that use
// this option (up to 256 creates a transaction, never two of one election
// in one, since znodes created together share a czxid, the fencing
// token), so that thousands of elections starting at once on one session
// cost a few transactions instead of one each. Each candidate still lists
// its election right behind the transaction carrying its create, and a
// create that fails on its own (a missing parent, an ACL) is made alone as
// without the option; naming, ownership checks and tokens are the same.
// Meant for many elections on one session (the partition manager uses it).
// Needs ZooKeeper 3.5 or later (create2 inside multi).
func WithBatchedCreates() CandidateOption {
	return func(c *candidateConfig) error { c.batched = true; return nil }
}

// WithNewElection says the election's znode (the path given to
// NewCandidate) most likely does not exist yet: the candidate's first
// create makes it, in one multi transaction with the candidate's own znode
// (batched with other candidates' as WithBatchedCreates does). Our znode
// is then the first child of a parent created in the same transaction, so
// it has the first sequence number and nothing can sort before it: the
// candidate leads on the create's reply and one read of its own znode,
// sent right behind the transaction without waiting (it arms the watch a
// leader keeps), instead of a listing. A cold start of an election costs
// one request and one round trip; without the option, two and two.
//
// If the election exists after all, the transaction fails and nothing of
// it is applied; the candidate's create is sent again at once without the
// election's, as without the option (one failed transaction is the price
// of a wrong guess, shared by the batch). Creates after the first
// (after a session expiry, a resignation) never make the election.
// The election's znode gets the candidate's ACL (WithACL), as a missing
// one does without the option; its ancestors must exist (otherwise the
// create falls back to making them one by one). The partition manager
// uses it for the shards that had no znode when the member started.
// Needs ZooKeeper 3.5 or later.
func WithNewElection() CandidateOption {
	return func(c *candidateConfig) error { c.newElection = true; return nil }
}

// MaxParticipantIDLen is the longest participant id WithParticipantID
// accepts, in bytes.
const MaxParticipantIDLen = 1024

// WithParticipantID sets the participant id stored as the znode's data
// (as Curator's LeaderLatch does), so observers can name the leader.
// Default: "<hostname>:<pid>". Not empty (an observer could not name the
// leader), at most MaxParticipantIDLen bytes; otherwise NewCandidate fails
// with a *OptionError.
func WithParticipantID(id string) CandidateOption {
	return func(c *candidateConfig) error {
		if id == "" {
			return &OptionError{Option: "WithParticipantID", Reason: "empty id"}
		}
		if len(id) > MaxParticipantIDLen {
			return &OptionError{Option: "WithParticipantID", Reason: fmt.Sprintf("longer than %d bytes", MaxParticipantIDLen)}
		}
		c.id = id
		return nil
	}
}

// WithMetricsLabel sets the value of the "election" label on this
// candidate's metrics (zkelect_is_leader, zkelect_leadership_acquired_total,
// zkelect_leadership_lost_total, zkelect_time_to_leadership_seconds);
// default its election path. Candidates sharing a label add up:
// zkelect_is_leader counts their leaderships. The partition manager labels
// every shard's election "<root>/shards/*", so that 10,000 shards make a
// handful of series, not 10,000 of each (Prometheus' advice: keep label
// values bounded). An empty label is refused with a *OptionError.
func WithMetricsLabel(label string) CandidateOption {
	return func(c *candidateConfig) error {
		if label == "" {
			return &OptionError{Option: "WithMetricsLabel", Reason: "empty label"}
		}
		c.metricsLabel = label
		return nil
	}
}

// WithNaming sets how candidate znodes are named (default CuratorNaming).
func WithNaming(n Naming) CandidateOption {
	return func(c *candidateConfig) error { c.naming = n; return nil }
}

// WithACL sets the ACL of the candidate's znode and of the election
// znode (against whose ACL ZooKeeper checks a delete of a candidate's)
// when the candidate creates it (default zk.WorldACL(zk.PermAll)).
// Missing ancestors get SharedParentACL(acl) (world:anyone:cr for a
// secured ACL: a level other groups may share); ancestors that exist keep
// their ACL: "/" is open in a fresh ensemble (world:anyone:cdrwa). With an
// ACL that keeps anyone from changing things, each campaign checks the
// election znode and its parent (CheckACL; see WithACLCheck) before its
// create and again once its znode exists, before it takes part.
func WithACL(acl []zk.ACL) CandidateOption {
	return func(c *candidateConfig) error {
		if len(acl) == 0 {
			return &OptionError{Option: "WithACL", Reason: "empty ACL"}
		}
		c.acl = acl
		return nil
	}
}

// WithACLCheck sets what a candidate with a secured ACL (WithACL) does
// when the election znode or its parent lets identities outside that ACL
// delete or change it (CheckACL, before a campaign's create and again
// right after it, so that a path made open by someone else between the
// two is never joined: the candidate's znode there is deleted first):
// refuse (ACLCheckRefuse, the default: Campaign fails with an error
// wrapping an *UnsafeACLError and ErrUnsafeACL), warn (ACLCheckWarn:
// logged, the campaign goes on) or not check (ACLCheckOff). A value out of
// range is refused with a *OptionError.
func WithACLCheck(check ACLCheck) CandidateOption {
	return func(c *candidateConfig) error {
		if check > ACLCheckOff {
			return &OptionError{Option: "WithACLCheck", Reason: fmt.Sprintf("unknown check %d", check)}
		}
		c.aclCheck = check
		return nil
	}
}

// WithConnectionLossPolicy sets what a leader does when its connection is
// lost (default EndOnSuspend()).
func WithConnectionLossPolicy(p ConnectionLossPolicy) CandidateOption {
	return func(c *candidateConfig) error {
		if p.tolerate && p.margin <= 0 {
			return &OptionError{Option: "TolerateSuspend", Reason: fmt.Sprintf("margin %v is not positive", p.margin)}
		}
		c.policy = p
		return nil
	}
}

// WithOnWaiting calls f each time the candidate starts waiting behind a
// predecessor in its election: its znode is created, the election listed
// and the watch on the znode before it set, so every request of its
// campaign has been answered and it leads once that znode goes. A caller
// that paces how many campaigns start at once (the partition manager does)
// can start the next one then, instead of guessing how long a campaign
// queued behind a sitting leader takes to get there. f runs on the
// candidate's own goroutine and must return promptly, without calling the
// candidate.
func WithOnWaiting(f func()) CandidateOption {
	return func(c *candidateConfig) error { c.onWaiting = f; return nil }
}

// WithCloseTimeout bounds how long Close (and Run's final resign) waits to
// confirm the deletion of the znode (default DefaultCloseTimeout).
func WithCloseTimeout(d time.Duration) CandidateOption {
	return func(c *candidateConfig) error {
		if d <= 0 {
			return &OptionError{Option: "WithCloseTimeout", Reason: fmt.Sprintf("%v is not positive", d)}
		}
		c.closeTimeout = d
		return nil
	}
}

// ConnectionLossPolicy says whether a leader keeps its leadership through a
// short loss of connection. The zero value is EndOnSuspend.
//
// Both policies also keep a local lease on the monotonic clock: the session
// cannot expire before (the latest instant the quorum leader is known to
// have heard of it, from the answer to a connect request or to the
// session's syncs; see the package documentation) + negotiated session
// timeout, so leadership ends at that instant minus a margin, even if no
// disconnect has been noticed yet (a stalled connection, a follower cut off
// from the quorum leader, a paused process that resumes).
type ConnectionLossPolicy struct {
	tolerate bool
	margin   time.Duration
}

// EndOnSuspend ends leadership with ErrSuspended as soon as the connection
// is lost: the safe default, since the session may expire while cut off
// and another candidate lead. If the session survives and the znode still
// leads, the candidate leads again with the same token. Its lease margin is
// a quarter of the negotiated session timeout.
func EndOnSuspend() ConnectionLossPolicy { return ConnectionLossPolicy{} }

// TolerateSuspend keeps leadership through a connection loss, but only
// until the lease deadline (see ConnectionLossPolicy) − margin on the
// monotonic clock; then it ends with
// ErrSuspended. The margin covers clock-rate differences and the time the
// caller needs to stop acting; it must be positive and below the session
// timeout (a third of it is a reasonable choice). A larger margin is safer
// and gives up leadership sooner.
//
// The trade-off: fewer leadership changes on a flaky network, against a
// window (bounded by the lease) in which this leader acts without knowing
// whether its session still exists. Fencing tokens still protect resources.
func TolerateSuspend(margin time.Duration) ConnectionLossPolicy {
	return ConnectionLossPolicy{tolerate: true, margin: margin}
}

// String describes the policy, for logs.
func (p ConnectionLossPolicy) String() string {
	if p.tolerate {
		return "tolerate-suspend(" + p.margin.String() + ")"
	}
	return "end-on-suspend"
}

// leaseMargin returns the margin for a negotiated session timeout t.
func (p ConnectionLossPolicy) leaseMargin(t time.Duration) time.Duration {
	if p.tolerate {
		return p.margin
	}
	return t / defaultLeaseFraction
}
