package sim

import "net/http"

// serveEC2 answers the EC2 query API. (Being built.)
func (s *Server) serveEC2(w http.ResponseWriter, req request) {
	writeError(w, req, http.StatusBadRequest, "InvalidAction", "not implemented yet: "+req.op)
}
