package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/rlog"
	"github.com/corral-db/corral/wire"
)

// The API speaks JSON. A request must carry the header "X-Console: 1":
// a page of another origin cannot add it without a CORS preflight, which
// the console never grants, so a foreign page cannot make a logged-in
// browser write (CSRF). Credentials travel in "X-Console-Auth:
// base64(user:password)" (digest scheme; empty for anonymous); the page
// keeps them in sessionStorage only.
const (
	headerGuard = "X-Console"
	headerAuth  = "X-Console-Auth"
	// maxBody bounds a request body: the largest znode (1 MiB, jute's
	// default maxbuffer) as base64, plus the JSON around it.
	maxBody = 2<<20 + 4096
)

// apiError is an error the page shows: Code is ZooKeeper's name for it
// (NOAUTH, NONODE, ...) or the console's own (READONLY, BADREQUEST).
type apiError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func badRequest(msg string) error {
	return &apiError{Status: http.StatusBadRequest, Code: "BADREQUEST", Message: msg}
}

// zkNames are the KeeperException.Code names the Java client prints, the
// names operators know.
var zkNames = map[wire.Code]string{
	wire.CodeSystemError: "SYSTEMERROR", wire.CodeConnectionLoss: "CONNECTIONLOSS",
	wire.CodeMarshallingError: "MARSHALLINGERROR", wire.CodeUnimplemented: "UNIMPLEMENTED",
	wire.CodeOperationTimeout: "OPERATIONTIMEOUT", wire.CodeBadArguments: "BADARGUMENTS",
	wire.CodeNoNode: "NONODE", wire.CodeNoAuth: "NOAUTH", wire.CodeBadVersion: "BADVERSION",
	wire.CodeNoChildrenForEphemerals: "NOCHILDRENFOREPHEMERALS", wire.CodeNodeExists: "NODEEXISTS",
	wire.CodeNotEmpty: "NOTEMPTY", wire.CodeSessionExpired: "SESSIONEXPIRED",
	wire.CodeInvalidACL: "INVALIDACL", wire.CodeAuthFailed: "AUTHFAILED",
	wire.CodeSessionMoved: "SESSIONMOVED", wire.CodeNotReadOnly: "NOTREADONLY",
	wire.CodeQuotaExceeded: "QUOTAEXCEEDED", wire.CodeThrottled: "THROTTLED",
	wire.CodeRequestTimeout: "REQUESTTIMEOUT",
}

// toAPIError maps any error to what the page shows: the one place where
// ZooKeeper codes become HTTP statuses.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &apiError{Status: http.StatusGatewayTimeout, Code: "TIMEOUT", Message: "the ensemble did not answer in time"}
	}
	var code wire.Code
	if errors.As(err, &code) {
		name := zkNames[code]
		if name == "" {
			name = "ZK" + strings.TrimPrefix(code.String(), "-")
		}
		status := http.StatusBadGateway
		switch code {
		case wire.CodeNoAuth, wire.CodeAuthFailed:
			status = http.StatusForbidden
		case wire.CodeNoNode:
			status = http.StatusNotFound
		case wire.CodeBadArguments, wire.CodeInvalidACL, wire.CodeNoChildrenForEphemerals:
			status = http.StatusBadRequest
		case wire.CodeNodeExists, wire.CodeNotEmpty, wire.CodeBadVersion:
			status = http.StatusConflict
		case wire.CodeConnectionLoss, wire.CodeSessionExpired, wire.CodeOperationTimeout, wire.CodeThrottled:
			status = http.StatusServiceUnavailable
		}
		return &apiError{Status: status, Code: name, Message: code.String()}
	}
	var le *rlog.Error
	if errors.As(err, &le) {
		status := http.StatusConflict
		switch le.Code {
		case rlog.CodeNotFound:
			status = http.StatusNotFound
		case rlog.CodeBadRequest, rlog.CodeTooLarge:
			status = http.StatusBadRequest
		}
		return &apiError{Status: status, Code: strings.ToUpper(strings.ReplaceAll(le.Code.String(), " ", "")), Message: le.Error()}
	}
	if st, ok := grpcstatus.FromError(err); ok && st.Code() != codes.OK {
		// The key-value store's and the logs' gRPC statuses.
		status := http.StatusBadGateway
		switch st.Code() {
		case codes.NotFound:
			status = http.StatusNotFound
		case codes.InvalidArgument, codes.OutOfRange:
			status = http.StatusBadRequest
		case codes.Unavailable, codes.Aborted:
			status = http.StatusServiceUnavailable
		case codes.DeadlineExceeded:
			status = http.StatusGatewayTimeout
		case codes.AlreadyExists, codes.FailedPrecondition:
			status = http.StatusConflict
		}
		return &apiError{Status: status, Code: strings.ToUpper(strings.ReplaceAll(st.Code().String(), " ", "")), Message: st.Message()}
	}
	return &apiError{Status: http.StatusInternalServerError, Code: "ERROR", Message: err.Error()}
}

// call is one API request as a handler sees it.
type call struct {
	r     *http.Request
	ctx   context.Context
	creds credentials
}

type handlerFunc func(*call) (any, error)

// api wraps a handler: checks the CSRF guard, parses the credentials,
// bounds the work by RequestTimeout, and writes the JSON answer.
func (c *Console) api(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if r.Header.Get(headerGuard) != "1" {
			writeJSON(w, http.StatusForbidden, map[string]any{"error": &apiError{Code: "FORBIDDEN", Message: "missing X-Console header"}})
			return
		}
		creds, err := parseCredentials(r.Header.Get(headerAuth))
		if err != nil {
			ae := toAPIError(err)
			writeJSON(w, ae.Status, map[string]any{"error": ae})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), c.cfg.RequestTimeout)
		defer cancel()
		v, err := h(&call{r: r, ctx: ctx, creds: creds})
		if err != nil {
			ae := toAPIError(err)
			if ae.Status >= 500 {
				c.cfg.Logger.Info("console: request failed", "path", r.URL.Path, "err", err)
			}
			writeJSON(w, ae.Status, map[string]any{"error": ae})
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// writing refuses every write when the console is read-only.
func (c *Console) writing(h handlerFunc) handlerFunc {
	return func(cl *call) (any, error) {
		if !c.cfg.Writable {
			return nil, &apiError{Status: http.StatusForbidden, Code: "READONLY",
				Message: "the console is read-only (set admin.console.writable=true to allow writes)"}
		}
		return h(cl)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeBody reads a JSON body of at most maxBody bytes into v; unknown
// fields are an error, so a typo is not silently ignored.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody+1))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("bad JSON body: " + err.Error())
	}
	return nil
}

// credentials are a digest user and password; the zero value is
// anonymous.
type credentials struct {
	user, password string
}

func (c credentials) anonymous() bool { return c.user == "" }

func parseCredentials(h string) (credentials, error) {
	if h == "" {
		return credentials{}, nil
	}
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		return credentials{}, badRequest("X-Console-Auth is not base64")
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok || user == "" {
		return credentials{}, badRequest("credentials must be user:password")
	}
	return credentials{user: user, password: password}, nil
}

// conn is the client session for the call's credentials.
func (c *Console) conn(cl *call) (*client.Conn, error) {
	return c.sessions.get(cl.ctx, cl.creds)
}
