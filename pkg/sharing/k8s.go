package sharing

import (
	corev1 "k8s.io/api/core/v1"
)

var _ corev1.ConfigMap
