package aws

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/gpufinops/gpufinops/providers"
)

// Compile-time checks of the optional capabilities.
var (
	_ providers.UtilizationReader = (*Provider)(nil)
	_ providers.Stopper           = (*Provider)(nil)
)

// Stop stops one instance with a normal (graceful, EBS-preserving) stop; it
// never terminates, hibernates or forces. It first reads the instance's state
// (DescribeInstances): gone → providers.ErrNotFound; stopping or stopped →
// AlreadyStopped, nothing else is called. It then asks StopInstances with
// DryRun, which answers DryRunOperation when the credentials may stop it
// (UnauthorizedOperation → providers.ErrPermission). With dryRun it stops
// there and reports the current state; otherwise it stops the instance. A
// one-time spot instance cannot be stopped (UnsupportedOperation →
// providers.ErrNotStoppable). A SageMaker ARN is a notebook instance to
// stop through SageMaker, or refused (stopSageMaker).
func (p *Provider) Stop(ctx context.Context, scope providers.Scope, instanceID string, dryRun bool) (providers.StopResult, error) {
	if err := ctx.Err(); err != nil {
		return providers.StopResult{}, err
	}
	if _, _, ok := sageMakerResource(instanceID); ok {
		return p.stopSageMaker(ctx, scope, instanceID, dryRun)
	}
	c, err := p.ec2Client(scope)
	if err != nil {
		return providers.StopResult{}, err
	}
	return stopInstance(ctx, c, instanceID, dryRun)
}

// stopAPI is the part of the EC2 client Stop uses.
type stopAPI interface {
	ec2.DescribeInstancesAPIClient
	StopInstances(ctx context.Context, in *ec2.StopInstancesInput, optFns ...func(*ec2.Options)) (*ec2.StopInstancesOutput, error)
}

func stopInstance(ctx context.Context, c stopAPI, instanceID string, dryRun bool) (providers.StopResult, error) {
	state, err := instanceState(ctx, c, instanceID)
	if err != nil {
		return providers.StopResult{}, err
	}
	switch state {
	case types.InstanceStateNameStopping, types.InstanceStateNameStopped:
		return providers.StopResult{PreviousState: string(state), CurrentState: string(state), AlreadyStopped: true}, nil
	case types.InstanceStateNameShuttingDown, types.InstanceStateNameTerminated:
		return providers.StopResult{}, fmt.Errorf("%s is %s: %w", instanceID, state, providers.ErrNotFound)
	}
	_, err = c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{instanceID}, DryRun: aws.Bool(true)})
	if err != nil && errorCode(err) != "DryRunOperation" {
		return providers.StopResult{}, stopError(ctx, instanceID, err)
	}
	if dryRun {
		return providers.StopResult{PreviousState: string(state), CurrentState: string(state)}, nil
	}
	out, err := c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{instanceID}})
	if err != nil {
		if errorCode(err) == "IncorrectInstanceState" {
			if now, serr := instanceState(ctx, c, instanceID); serr == nil && (now == types.InstanceStateNameStopping || now == types.InstanceStateNameStopped) {
				return providers.StopResult{PreviousState: string(now), CurrentState: string(now), AlreadyStopped: true}, nil
			}
		}
		return providers.StopResult{}, stopError(ctx, instanceID, err)
	}
	res := providers.StopResult{PreviousState: string(state), CurrentState: string(types.InstanceStateNameStopping)}
	for _, sc := range out.StoppingInstances {
		if aws.ToString(sc.InstanceId) != instanceID {
			continue
		}
		if sc.PreviousState != nil {
			res.PreviousState = string(sc.PreviousState.Name)
		}
		if sc.CurrentState != nil {
			res.CurrentState = string(sc.CurrentState.Name)
		}
	}
	switch types.InstanceStateName(res.PreviousState) {
	case types.InstanceStateNameStopping, types.InstanceStateNameStopped:
		res.AlreadyStopped = true
	}
	return res, nil
}

// instanceState reads one instance's state; an unknown id is
// providers.ErrNotFound.
func instanceState(ctx context.Context, c ec2.DescribeInstancesAPIClient, id string) (types.InstanceStateName, error) {
	out, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		return "", stopError(ctx, id, err)
	}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			if aws.ToString(in.InstanceId) == id && in.State != nil {
				return in.State.Name, nil
			}
		}
	}
	return "", fmt.Errorf("%s: %w", id, providers.ErrNotFound)
}

// stopError maps the errors of stopping an instance to the sentinels.
func stopError(ctx context.Context, id string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed":
			return fmt.Errorf("%s: %w: %s", id, providers.ErrNotFound, apiErr.ErrorMessage())
		case "UnsupportedOperation":
			return fmt.Errorf("%s: %w: %s (a one-time spot instance can only be terminated; gpufinops never terminates)", id, providers.ErrNotStoppable, apiErr.ErrorMessage())
		}
	}
	return fmt.Errorf("%s: %w", id, classify(err))
}

// errorCode is the AWS error code of err, or "".
func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}
