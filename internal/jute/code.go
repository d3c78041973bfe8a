package jute

import "strconv"

// Code is a ZooKeeper error code, as a reply header carries it (ZooKeeper's
// KeeperException.Code; -116 and -117 are the C client's, which
// go-zookeeper shares).
type Code int32

// Class says what an error code means to a client: which of three things
// to do about it.
type Class uint8

const (
	// ClassCaller: the request was wrong or its precondition failed (bad
	// arguments, no node, node exists, not empty, bad version, no auth,
	// quota...); retrying the same request gets the same answer.
	ClassCaller Class = iota + 1
	// ClassRetry: the server could not serve the request now (connection
	// loss, throttled, session moved, not read-only, reconfiguration in
	// progress...); retry with backoff, the session lives on.
	ClassRetry
	// ClassSessionOver: the session is gone or unusable for good (expired,
	// authentication failed, closing); only a new session helps.
	ClassSessionOver
)

// String names the class.
func (c Class) String() string {
	switch c {
	case ClassCaller:
		return "caller"
	case ClassRetry:
		return "retry"
	case ClassSessionOver:
		return "session_over"
	}
	return "unknown"
}

// Error codes.
const (
	CodeOK                       Code = 0
	CodeSystemError              Code = -1
	CodeRuntimeInconsistency     Code = -2
	CodeDataInconsistency        Code = -3
	CodeConnectionLoss           Code = -4
	CodeMarshallingError         Code = -5
	CodeUnimplemented            Code = -6
	CodeOperationTimeout         Code = -7
	CodeBadArguments             Code = -8
	CodeUnknownSession           Code = -12
	CodeNewConfigNoQuorum        Code = -13
	CodeReconfigInProgress       Code = -14
	CodeAPIError                 Code = -100
	CodeNoNode                   Code = -101
	CodeNoAuth                   Code = -102
	CodeBadVersion               Code = -103
	CodeNoChildrenForEphemerals  Code = -108
	CodeNodeExists               Code = -110
	CodeNotEmpty                 Code = -111
	CodeSessionExpired           Code = -112
	CodeInvalidCallback          Code = -113
	CodeInvalidACL               Code = -114
	CodeAuthFailed               Code = -115
	CodeClosing                  Code = -116
	CodeNothing                  Code = -117
	CodeSessionMoved             Code = -118
	CodeNotReadOnly              Code = -119
	CodeEphemeralOnLocalSession  Code = -120
	CodeNoWatcher                Code = -121
	CodeRequestTimeout           Code = -122
	CodeReconfigDisabled         Code = -123
	CodeSessionClosedRequireSASL Code = -124
	CodeQuotaExceeded            Code = -125
	CodeThrottled                Code = -127
)

// codeInfo is one row of the table: the code's name (ZooKeeper's) and
// class.
type codeInfo struct {
	name  string
	class Class
}

// codes is every error code ZooKeeper (3.9) and go-zookeeper know.
var codes = map[Code]codeInfo{
	CodeSystemError:              {"SYSTEMERROR", ClassCaller},
	CodeRuntimeInconsistency:     {"RUNTIMEINCONSISTENCY", ClassCaller},
	CodeDataInconsistency:        {"DATAINCONSISTENCY", ClassCaller},
	CodeConnectionLoss:           {"CONNECTIONLOSS", ClassRetry},
	CodeMarshallingError:         {"MARSHALLINGERROR", ClassCaller},
	CodeUnimplemented:            {"UNIMPLEMENTED", ClassCaller},
	CodeOperationTimeout:         {"OPERATIONTIMEOUT", ClassRetry},
	CodeBadArguments:             {"BADARGUMENTS", ClassCaller},
	CodeUnknownSession:           {"UNKNOWNSESSION", ClassSessionOver},
	CodeNewConfigNoQuorum:        {"NEWCONFIGNOQUORUM", ClassCaller},
	CodeReconfigInProgress:       {"RECONFIGINPROGRESS", ClassRetry},
	CodeAPIError:                 {"APIERROR", ClassCaller},
	CodeNoNode:                   {"NONODE", ClassCaller},
	CodeNoAuth:                   {"NOAUTH", ClassCaller},
	CodeBadVersion:               {"BADVERSION", ClassCaller},
	CodeNoChildrenForEphemerals:  {"NOCHILDRENFOREPHEMERALS", ClassCaller},
	CodeNodeExists:               {"NODEEXISTS", ClassCaller},
	CodeNotEmpty:                 {"NOTEMPTY", ClassCaller},
	CodeSessionExpired:           {"SESSIONEXPIRED", ClassSessionOver},
	CodeInvalidCallback:          {"INVALIDCALLBACK", ClassCaller},
	CodeInvalidACL:               {"INVALIDACL", ClassCaller},
	CodeAuthFailed:               {"AUTHFAILED", ClassSessionOver},
	CodeClosing:                  {"CLOSING", ClassSessionOver},
	CodeNothing:                  {"NOTHING", ClassRetry},
	CodeSessionMoved:             {"SESSIONMOVED", ClassRetry},
	CodeNotReadOnly:              {"NOTREADONLY", ClassRetry},
	CodeEphemeralOnLocalSession:  {"EPHEMERALONLOCALSESSION", ClassCaller},
	CodeNoWatcher:                {"NOWATCHER", ClassCaller},
	CodeRequestTimeout:           {"REQUESTTIMEOUT", ClassRetry},
	CodeReconfigDisabled:         {"RECONFIGDISABLED", ClassCaller},
	CodeSessionClosedRequireSASL: {"SESSIONCLOSEDREQUIRESASLAUTH", ClassSessionOver},
	CodeQuotaExceeded:            {"QUOTAEXCEEDED", ClassCaller},
	CodeThrottled:                {"THROTTLEDOP", ClassRetry},
}

// String returns the code's ZooKeeper name, or "code <n>" for one no
// table row names.
func (c Code) String() string {
	if c == CodeOK {
		return "OK"
	}
	if i, ok := codes[c]; ok {
		return i.name
	}
	return "code " + strconv.Itoa(int(c))
}

// Class returns what the code means to a client. A code no row names is
// the caller's: it is not known to be transient, and retrying an unknown
// answer forever would hide it.
func (c Code) Class() Class {
	if i, ok := codes[c]; ok {
		return i.class
	}
	return ClassCaller
}

// Known reports whether the table names c.
func (c Code) Known() bool {
	_, ok := codes[c]
	return ok || c == CodeOK
}
