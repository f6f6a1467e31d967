package sim

import "net/http"

// serveSTS answers STS. (Being built.)
func (s *Server) serveSTS(w http.ResponseWriter, req request) {
	writeError(w, req, http.StatusBadRequest, "InvalidAction", "not implemented yet: "+req.op)
}
