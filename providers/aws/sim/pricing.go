package sim

import "net/http"

// servePricing answers the Price List Query API. (Being built.)
func (s *Server) servePricing(w http.ResponseWriter, req request) {
	writeError(w, req, http.StatusBadRequest, "InvalidAction", "not implemented yet: "+req.op)
}

// serveSavingsPlans answers the Savings Plans API. (Being built.)
func (s *Server) serveSavingsPlans(w http.ResponseWriter, req request) {
	writeError(w, req, http.StatusBadRequest, "InvalidAction", "not implemented yet: "+req.op)
}
