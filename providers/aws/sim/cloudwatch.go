package sim

import "net/http"

// serveCloudWatch answers CloudWatch in CBOR, JSON 1.0 and query. (Being built.)
func (s *Server) serveCloudWatch(w http.ResponseWriter, req request) {
	writeError(w, req, http.StatusBadRequest, "InvalidAction", "not implemented yet: "+req.op)
}

// writeCBORError writes a Smithy RPC v2 CBOR error. (Being built.)
func writeCBORError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
	w.Header().Set("Content-Type", "application/cbor")
	w.WriteHeader(status)
}
