package aws

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	smtypes "github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/gpufinops/gpufinops/providers"
)

// sageMakerResource splits a SageMaker ARN into its resource type and
// name ("notebook-instance", "nb-a"); ok is false for any other ID.
func sageMakerResource(id string) (typ, name string, ok bool) {
	parts := strings.SplitN(id, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sagemaker" {
		return "", "", false
	}
	typ, name, _ = strings.Cut(parts[5], "/")
	return typ, name, true
}

// notebookAPI is the part of the SageMaker client stopping a notebook
// instance uses.
type notebookAPI interface {
	DescribeNotebookInstance(context.Context, *sagemaker.DescribeNotebookInstanceInput, ...func(*sagemaker.Options)) (*sagemaker.DescribeNotebookInstanceOutput, error)
	StopNotebookInstance(context.Context, *sagemaker.StopNotebookInstanceInput, ...func(*sagemaker.Options)) (*sagemaker.StopNotebookInstanceOutput, error)
}

// stopSageMaker stops a SageMaker notebook instance by ARN; every other
// SageMaker item is refused (providers.ErrNotStoppable): endpoints,
// Studio apps and jobs are never stopped or deleted by the tool.
func (p *Provider) stopSageMaker(ctx context.Context, scope providers.Scope, id string, dryRun bool) (providers.StopResult, error) {
	typ, name, _ := sageMakerResource(id)
	if typ != "notebook-instance" || name == "" {
		return providers.StopResult{}, fmt.Errorf("%s: %w: gpufinops stops only SageMaker notebook instances, never a %s (the report gives the command)", id, providers.ErrNotStoppable, typ)
	}
	c, err := p.sageMakerClient(scope)
	if err != nil {
		return providers.StopResult{}, err
	}
	return stopNotebook(ctx, c, id, name, dryRun)
}

// stopNotebook reads the notebook's status (DescribeNotebookInstance: gone
// → providers.ErrNotFound; Stopping or Stopped → AlreadyStopped, nothing
// else called). SageMaker has no DryRun: a dry run stops there. Otherwise
// StopNotebookInstance stops it; SageMaker stops it asynchronously, so the
// current state is Stopping.
func stopNotebook(ctx context.Context, c notebookAPI, id, name string, dryRun bool) (providers.StopResult, error) {
	status, err := notebookStatus(ctx, c, id, name)
	if err != nil {
		return providers.StopResult{}, err
	}
	switch status {
	case smtypes.NotebookInstanceStatusStopping, smtypes.NotebookInstanceStatusStopped:
		return providers.StopResult{PreviousState: string(status), CurrentState: string(status), AlreadyStopped: true}, nil
	case smtypes.NotebookInstanceStatusInService:
	default:
		return providers.StopResult{}, fmt.Errorf("%s is %s: %w: SageMaker stops only an InService notebook instance", id, status, providers.ErrNotStoppable)
	}
	if dryRun {
		return providers.StopResult{PreviousState: string(status), CurrentState: string(status)}, nil
	}
	if _, err := c.StopNotebookInstance(ctx, &sagemaker.StopNotebookInstanceInput{NotebookInstanceName: aws.String(name)}); err != nil {
		if now, serr := notebookStatus(ctx, c, id, name); serr == nil && (now == smtypes.NotebookInstanceStatusStopping || now == smtypes.NotebookInstanceStatusStopped) {
			return providers.StopResult{PreviousState: string(now), CurrentState: string(now), AlreadyStopped: true}, nil
		}
		return providers.StopResult{}, fmt.Errorf("%s: %w", id, callError(ctx, "sagemaker:StopNotebookInstance", err))
	}
	return providers.StopResult{PreviousState: string(status), CurrentState: string(smtypes.NotebookInstanceStatusStopping)}, nil
}

// notebookStatus reads a notebook instance's status; SageMaker answers an
// unknown one with ValidationException RecordNotFound (providers.ErrNotFound).
func notebookStatus(ctx context.Context, c notebookAPI, id, name string) (smtypes.NotebookInstanceStatus, error) {
	out, err := c.DescribeNotebookInstance(ctx, &sagemaker.DescribeNotebookInstanceInput{NotebookInstanceName: aws.String(name)})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", ctxErr
		}
		if errorCode(err) == "ValidationException" && strings.Contains(err.Error(), "RecordNotFound") {
			return "", fmt.Errorf("%s: %w", id, providers.ErrNotFound)
		}
		return "", fmt.Errorf("%s: %w", id, callError(ctx, "sagemaker:DescribeNotebookInstance", err))
	}
	return out.NotebookInstanceStatus, nil
}
