package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/zkelect/zkelect/internal/znode"
	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zkelecthttp"
	"github.com/zkelect/zkelect/zxidfence"
)

// targetFlags choose what status and watch look at: one election or a
// partition root.
type targetFlags struct {
	common   commonFlags
	election string
	root     string
	output   string
}

func (f *targetFlags) register(cmd *cobra.Command, outputs string) {
	f.common.registerWithLevel(cmd.Flags(), "error")
	fs := cmd.Flags()
	fs.StringVar(&f.election, "election", "", "election path (a zkelect, Curator LeaderLatch or kazoo election)")
	fs.StringVar(&f.root, "root", "", "partition root of a shards deployment")
	fs.StringVarP(&f.output, "output", "o", strings.Split(outputs, "|")[0], "output format: "+outputs)
}

func (f *targetFlags) validate(outputs string) error {
	if err := f.common.validate(); err != nil {
		return err
	}
	switch {
	case f.election == "" && f.root == "":
		return errors.New("nothing to look at: pass --election PATH or --root ROOT")
	case f.election != "" && f.root != "":
		return errors.New("pass either --election or --root, not both")
	case f.election != "":
		if err := checkZNodePath("election", f.election); err != nil {
			return err
		}
	default:
		if err := checkZNodePath("root", f.root); err != nil {
			return err
		}
	}
	for _, o := range strings.Split(outputs, "|") {
		if f.output == o {
			return nil
		}
	}
	return fmt.Errorf("invalid --output %q: use %s", f.output, strings.ReplaceAll(outputs, "|", " or "))
}

func newStatusCmd() *cobra.Command {
	f := &targetFlags{}
	const outputs = "table|json"
	cmd := &cobra.Command{
		Use:   "status (--election PATH | --root ROOT) [-o table|json]",
		Short: "Show who leads an election, or every shard of a partition root",
		Long: `For an election: the leader with its fencing token (hex zxid and epoch:counter)
and every participant in order. Works on elections made by zkelect, Curator's
LeaderLatch and kazoo. For a partition root: each shard's leader, token and
standbys, and how many shards each member leads.

Exit status, for health checks: 0 when the election has a leader (every shard
of the root has one); 1 when it could not be read (bad flags, ZooKeeper out of
reach); 2 when there is no such election or root, or --election names a
partition root; 3 when the election has no leader, or some shard has none.`,
		Example: `  zkelect status --zk 127.0.0.1:2181 --election /apps/cron/leader
  zkelect status --zk 127.0.0.1:2181 --root /apps/billing -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(outputs); err != nil {
				return err
			}
			return runStatus(cmd, f)
		},
	}
	f.register(cmd, outputs)
	return cmd
}

func runStatus(cmd *cobra.Command, f *targetFlags) error {
	c, err := f.common.dial(cmd)
	if err != nil {
		return err
	}
	defer c.close()
	ctx, sess := c.ctx, c.sess
	ctx, cancel := context.WithTimeout(ctx, f.common.sessionTimeout)
	defer cancel()
	if f.election != "" {
		if err := checkIsElection(ctx, sess, f.election); err != nil {
			return err
		}
		st, err := electionStatusOf(ctx, sess, f.election)
		if err != nil {
			return err
		}
		if err := st.write(cmd.OutOrStdout(), f.output); err != nil {
			return err
		}
		return st.health()
	}
	st, err := rootStatusOf(ctx, sess, f.root)
	if err != nil {
		return err
	}
	if err := st.write(cmd.OutOrStdout(), f.output); err != nil {
		return err
	}
	return st.health()
}

// Exit statuses of status, for health checks.
const (
	statusMissing = 2 // no such election or partition root, or --election names a partition root
	statusUnled   = 3 // the election has no leader, or some shard of the root has none
)

// checkIsElection fails with statusMissing when path does not exist or is
// a partition root (it has members, owners and shards children).
func checkIsElection(ctx context.Context, sess *recipe.Session, path string) error {
	wctx, forget := context.WithCancel(ctx)
	defer forget() // removes the watch
	children, _, _, err := sess.ChildrenW(wctx, path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return &exitError{code: statusMissing, err: fmt.Errorf("election %s does not exist: check --election", path)}
	case err != nil:
		return fmt.Errorf("read election %s: %w", path, err)
	case slices.Contains(children, "members") && slices.Contains(children, "shards"):
		return &exitError{code: statusMissing, err: fmt.Errorf("%s is a partition root, not an election: use --root %s", path, path)}
	}
	return nil
}

// health is status's verdict on an election: statusUnled without a leader.
func (st *electionStatus) health() error {
	if st.Leader == nil {
		return &exitError{code: statusUnled, err: fmt.Errorf("election %s has no leader", st.Election)}
	}
	return nil
}

// health is status's verdict on a root: statusUnled while a shard has no
// leader, or an election outside the root's buckets (an older release
// campaigning beside them: the shard may have two leaders).
func (st *rootStatus) health() error {
	unled, stray := 0, []string{}
	for _, s := range st.Shards {
		if s.Leader == "" {
			unled++
		}
		if s.Stray != "" {
			stray = append(stray, s.Shard)
		}
	}
	if len(stray) > 0 {
		return &exitError{code: statusUnled, err: fmt.Errorf("%d shards of %s have an election outside its buckets, under %s/shards (%s): a release before buckets runs on this bucketed root and may lead them beside this release's leaders; stop it", len(stray), st.Root, st.Root, strings.Join(stray, ", "))}
	}
	if unled > 0 {
		return &exitError{code: statusUnled, err: fmt.Errorf("%d of %d shards of %s have no leader", unled, len(st.Shards), st.Root)}
	}
	return nil
}

// tokenText is the token as tables print it: 0x100000005 (1:5).
func tokenText(t zxidfence.Token) string {
	if t.IsZero() {
		return "-"
	}
	return t.Hex() + " (" + t.EpochCounter() + ")"
}

// participantJSON is one participant of an election.
type participantJSON struct {
	ID     string    `json:"id"`
	Znode  string    `json:"znode"`
	Token  tokenJSON `json:"token"`
	Leader bool      `json:"leader"`
}

// electionStatus is the status of one election.
type electionStatus struct {
	Election     string            `json:"election"`
	Leader       *participantJSON  `json:"leader"` // null when nobody leads
	Participants []participantJSON `json:"participants"`
}

func electionStatusOf(ctx context.Context, sess *recipe.Session, path string) (*electionStatus, error) {
	ps, err := recipe.Participants(ctx, sess, path)
	if err != nil {
		return nil, fmt.Errorf("read election %s: %w", path, err)
	}
	st := &electionStatus{Election: path, Participants: []participantJSON{}}
	for _, p := range ps {
		pj := participantJSON{ID: p.ID, Znode: p.Znode, Token: newTokenJSON(p.Token), Leader: p.Leader}
		st.Participants = append(st.Participants, pj)
		if p.Leader {
			st.Leader = &pj
		}
	}
	return st, nil
}

func (st *electionStatus) write(w io.Writer, format string) error {
	if format == "json" {
		return writeJSON(w, st)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "election:\t%s\n", termSafe(st.Election))
	if st.Leader == nil {
		fmt.Fprintf(tw, "leader:\tnone\n")
	} else {
		fmt.Fprintf(tw, "leader:\t%s\n", termSafe(st.Leader.ID))
		fmt.Fprintf(tw, "token:\t%s (%s)\n", st.Leader.Token.Hex, st.Leader.Token.EpochCounter)
	}
	fmt.Fprintf(tw, "participants:\t%d\n\n", len(st.Participants))
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tID\tTOKEN\tZNODE\tROLE")
	for i, p := range st.Participants {
		role := "standby"
		if p.Leader {
			role = "leader"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s (%s)\t%s\t%s\n", i, termSafe(p.ID), p.Token.Hex, p.Token.EpochCounter, termSafe(znode.Name(p.Znode)), role)
	}
	return tw.Flush()
}

func rootStatusOf(ctx context.Context, sess *recipe.Session, root string) (*rootStatus, error) {
	owners, err := partition.Owners(ctx, sess, root)
	if err != nil {
		return nil, fmt.Errorf("read partition root %s: %w", root, err)
	}
	if len(owners) == 0 {
		return nil, &exitError{code: statusMissing, err: errNoShards(root)}
	}
	cl, err := partition.ReadCluster(ctx, sess, root)
	if err != nil {
		return nil, fmt.Errorf("read partition root %s: %w", root, err)
	}
	st := &rootStatus{zkelecthttp.Owners{Root: root, Shards: []shardJSON{}, Members: map[string]int{}, Operator: zkelecthttp.OperatorOf(cl, time.Now())}}
	for shard, o := range owners {
		sj := shardJSON{Shard: shard, Leader: o.Member, Address: o.Address, Standbys: append([]string{}, o.Standbys...), Stuck: o.Stuck, Stray: o.Stray}
		if o.Member != "" {
			t := newTokenJSON(o.Token)
			sj.Token = &t
			st.Members[o.Member]++
		}
		for _, s := range o.Standbys {
			if _, ok := st.Members[s]; !ok {
				st.Members[s] = 0
			}
		}
		st.Shards = append(st.Shards, sj)
	}
	sort.Slice(st.Shards, func(i, j int) bool { return shardLess(st.Shards[i].Shard, st.Shards[j].Shard) })
	st.MemberList = zkelecthttp.MembersOf(cl, st.Members)
	return st, nil
}

func (st *rootStatus) write(w io.Writer, format string) error {
	if format == "json" {
		return writeJSON(w, st)
	}
	if err := st.writeOperator(w); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SHARD\tLEADER\tTOKEN\tSTANDBYS\tNOTE")
	for _, s := range st.Shards {
		leader, token := s.Leader, "-"
		switch {
		case leader == "" && s.Stuck != "":
			leader = "(none: stuck behind persistent " + s.Stuck + ")"
		case leader == "":
			leader = "(none)"
		}
		if s.Token != nil {
			token = s.Token.Hex + " (" + s.Token.EpochCounter + ")"
		}
		note := st.shardNote(s.Shard)
		if s.Stray != "" {
			note = strings.TrimPrefix(note+", stray election "+s.Stray+" (an older release's)", ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termSafe(s.Shard), termSafe(leader), token, strings.Join(termSafeAll(s.Standbys), ","), termSafe(note))
	}
	fmt.Fprintln(tw)
	if err := tw.Flush(); err != nil {
		return err
	}
	return st.writeCounts(w)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
