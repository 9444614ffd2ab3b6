"""The autoscaler: Autoscaler objects drive the /scale subresource with the upstream HPA rules."""
