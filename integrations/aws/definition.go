package aws

import "github.com/compliance-appliance/compliance/app"

// Check ids; stable across releases (findings are kept per check id).
const (
	CheckRootMFA               = "aws.root_mfa"
	CheckRootAccessKeys        = "aws.root_access_keys"
	CheckUserMFA               = "aws.iam_user_mfa"
	CheckAccessKeyAge          = "aws.access_key_age"
	CheckPasswordPolicy        = "aws.password_policy"
	CheckCloudTrailMultiRegion = "aws.cloudtrail_multi_region"
	CheckCloudTrailValidation  = "aws.cloudtrail_log_validation"
	CheckS3AccountPublicBlock  = "aws.s3_account_public_access_block"
	CheckS3BucketPublicBlock   = "aws.s3_bucket_public_access_block"
	CheckS3BucketEncryption    = "aws.s3_bucket_encryption"
	CheckEBSDefaultEncryption  = "aws.ebs_default_encryption"
	CheckSecurityGroupPorts    = "aws.security_group_admin_ports"
	CheckKMSRotation           = "aws.kms_key_rotation"
	CheckGuardDuty             = "aws.guardduty_enabled"
)

// Scan modes (AwsScanMode): the connection's regions, or every region the
// account has enabled (EC2 DescribeRegions).
const (
	ScanSelectedRegions = "selected_regions"
	ScanAllRegions      = "all_regions"
)

// ScanModes lists the AwsScanMode values.
var ScanModes = []string{ScanSelectedRegions, ScanAllRegions}

// MaxKeyAgeDays is the age above which an active access key fails.
const MaxKeyAgeDays = 90

// AdminPorts are the ports that may not be open to the whole internet.
var AdminPorts = map[int]string{22: "SSH", 3389: "RDP", 3306: "MySQL", 5432: "PostgreSQL", 1433: "SQL Server",
	1521: "Oracle", 27017: "MongoDB", 6379: "Redis", 9200: "Elasticsearch", 5439: "Redshift"}

func iso(ref string) app.RequirementRef {
	return app.RequirementRef{Framework: "iso27001-2022", Ref: ref}
}
func soc2(ref string) app.RequirementRef { return app.RequirementRef{Framework: "soc2-2017", Ref: ref} }
func csf(ref string) app.RequirementRef {
	return app.RequirementRef{Framework: "nist-csf-2.0", Ref: ref}
}

var definition = app.ProviderDefinition{
	Slug:         "aws",
	Name:         "Amazon Web Services",
	Category:     "cloud",
	Description:  "Tests an AWS account's security posture with read-only credentials: root account, IAM users and keys, password policy, CloudTrail, S3 public access and encryption, EBS encryption, security groups, KMS key rotation and GuardDuty.",
	DocsURL:      "https://docs.aws.amazon.com/aws-managed-policy/latest/reference/SecurityAudit.html",
	AuthStrategy: app.ProviderAuthAWSKeys,
	Credentials: []app.CredentialField{
		{Key: "accessKeyId", Label: "Access key ID", Type: "text", Required: true, Placeholder: "AKIA…",
			Help: "An access key of an IAM user (or of the principal that assumes the role below) with the AWS managed policy SecurityAudit."},
		{Key: "secretAccessKey", Label: "Secret access key", Type: "password", Secret: true, Required: true},
		{Key: "sessionToken", Label: "Session token", Type: "password", Secret: true,
			Help: "Only for temporary credentials."},
		{Key: "roleArn", Label: "Role to assume", Type: "text", Placeholder: "arn:aws:iam::123456789012:role/ComplianceAudit",
			Help: "Optional: the keys above assume this role (sts AssumeRole) for each run; give the role SecurityAudit."},
		{Key: "externalId", Label: "External ID", Type: "text",
			Help: "The external ID the role's trust policy requires, if any."},
		{Key: "endpointUrl", Label: "Endpoint override", Type: "url",
			Help: "Leave empty for AWS's public endpoints (GovCloud and China regions are recognised by name). Set it to send every call to one URL, such as a private endpoint gateway."},
	},
	Variables: []app.ProviderVariable{
		{Key: "regions", Label: "Regions", Type: "text", Default: "us-east-1", Options: Regions, OptionsFrom: app.OptionsStatic,
			Help: "Regions to check (separated by commas), e.g. eu-west-1, eu-central-1. The first one is used for the global services."},
		{Key: "scanMode", Label: "Scan mode", Type: "select", Default: ScanSelectedRegions, Options: ScanModes,
			Help: "selected_regions: the regions above; all_regions: every region enabled in the account."},
	},
	Services: []app.ProviderService{
		{ID: "iam", Name: "IAM", EnabledDefault: true},
		{ID: "cloudtrail", Name: "CloudTrail", EnabledDefault: true},
		{ID: "s3", Name: "S3", EnabledDefault: true},
		{ID: "ec2", Name: "EC2 (EBS, security groups)", EnabledDefault: true},
		{ID: "kms", Name: "KMS", EnabledDefault: true},
		{ID: "guardduty", Name: "GuardDuty", EnabledDefault: true},
	},
	Capabilities: []string{app.CapabilityChecks, app.CapabilityCloudSecurity},
	Checks: []app.CheckDefinition{
		{ID: CheckRootMFA, Service: "iam", CloudSecurity: true, Severity: "critical",
			Title:       "Root user has MFA",
			Description: "The account's root user has multi-factor authentication enabled (IAM GetAccountSummary, AccountMFAEnabled).",
			Remediation: "Sign in as the root user, open Security credentials and assign an MFA device (a hardware key where possible).",
			Evidences:   []app.RequirementRef{iso("A.5.17"), iso("A.8.5"), soc2("CC6.1"), csf("PR.AA-03")}},
		{ID: CheckRootAccessKeys, Service: "iam", CloudSecurity: true, Severity: "critical",
			Title:       "Root user has no access keys",
			Description: "The root user has no access keys (IAM GetAccountSummary, AccountAccessKeysPresent).",
			Remediation: "Sign in as the root user, open Security credentials and delete its access keys; use IAM roles or users for programmatic access.",
			Evidences:   []app.RequirementRef{iso("A.8.2"), iso("A.5.15"), soc2("CC6.1"), soc2("CC6.3"), csf("PR.AA-05")}},
		{ID: CheckUserMFA, Service: "iam", CloudSecurity: true, Severity: "high",
			Title:       "IAM users with a console password have MFA",
			Description: "Each IAM user that can sign in to the console (has a login profile) has an MFA device; users without a password pass.",
			Remediation: "Assign an MFA device to the user (IAM, Users, Security credentials) or remove the console password if it is not needed.",
			Evidences:   []app.RequirementRef{iso("A.5.17"), iso("A.8.5"), soc2("CC6.1"), csf("PR.AA-03")}},
		{ID: CheckAccessKeyAge, Service: "iam", CloudSecurity: true, Severity: "medium",
			Title:       "Access keys are rotated within 90 days",
			Description: "Each IAM user's active access keys were created less than 90 days ago.",
			Remediation: "Create a new access key for the user, move its consumers to it, then deactivate and delete the old one.",
			Evidences:   []app.RequirementRef{iso("A.5.17"), iso("A.8.5"), soc2("CC6.1"), csf("PR.AA-01")}},
		{ID: CheckPasswordPolicy, Service: "iam", CloudSecurity: true, Severity: "medium",
			Title:       "Account password policy is strong",
			Description: "The account has a password policy with a minimum length of at least 14 and prevents reuse of the last 24 passwords.",
			Remediation: "In IAM, Account settings, edit the password policy: minimum length 14 or more, prevent reuse of 24 passwords.",
			Evidences:   []app.RequirementRef{iso("A.5.17"), soc2("CC6.1"), csf("PR.AA-01")}},
		{ID: CheckCloudTrailMultiRegion, Service: "cloudtrail", CloudSecurity: true, Severity: "high",
			Title:       "A multi-region CloudTrail trail is logging",
			Description: "At least one CloudTrail trail covers every region and is logging (DescribeTrails, GetTrailStatus).",
			Remediation: "Create a trail applying to all regions (CloudTrail, Trails, Create trail) or turn logging on for the existing one.",
			Evidences:   []app.RequirementRef{iso("A.8.15"), iso("A.8.16"), soc2("CC7.2"), csf("DE.CM-01")}},
		{ID: CheckCloudTrailValidation, Service: "cloudtrail", CloudSecurity: true, Severity: "medium",
			Title:       "CloudTrail log file validation is on",
			Description: "Each trail has log file integrity validation enabled, so tampering with delivered logs can be detected.",
			Remediation: "Edit the trail and enable Log file validation.",
			Evidences:   []app.RequirementRef{iso("A.8.15"), soc2("CC7.2"), csf("PR.DS-01")}},
		{ID: CheckS3AccountPublicBlock, Service: "s3", CloudSecurity: true, Severity: "high",
			Title:       "S3 Block Public Access is on for the account",
			Description: "The account-level S3 Block Public Access settings block public ACLs and policies (all four settings on).",
			Remediation: "In S3, Block Public Access settings for this account, turn on all four settings.",
			Evidences:   []app.RequirementRef{iso("A.8.3"), iso("A.5.15"), soc2("CC6.1"), csf("PR.DS-01")}},
		{ID: CheckS3BucketPublicBlock, Service: "s3", CloudSecurity: true, Severity: "high",
			Title:       "S3 buckets block public access",
			Description: "Each bucket blocks public access with all four settings, itself or through the account-level settings.",
			Remediation: "Open the bucket's Permissions tab and turn on Block all public access (or turn it on for the account).",
			Evidences:   []app.RequirementRef{iso("A.8.3"), iso("A.5.15"), soc2("CC6.1"), csf("PR.DS-01")}},
		{ID: CheckS3BucketEncryption, Service: "s3", CloudSecurity: true, Severity: "medium",
			Title:       "S3 buckets have default encryption",
			Description: "Each bucket has a default server-side encryption configuration (GetBucketEncryption).",
			Remediation: "Open the bucket's Properties, Default encryption, and choose SSE-S3 or SSE-KMS.",
			Evidences:   []app.RequirementRef{iso("A.8.24"), soc2("CC6.1"), csf("PR.DS-01")}},
		{ID: CheckEBSDefaultEncryption, Service: "ec2", CloudSecurity: true, Severity: "medium",
			Title:       "EBS encryption by default is on",
			Description: "In each checked region new EBS volumes are encrypted by default (GetEbsEncryptionByDefault).",
			Remediation: "In EC2, Settings, EBS encryption, tick Always encrypt new EBS volumes, in each region.",
			Evidences:   []app.RequirementRef{iso("A.8.24"), soc2("CC6.1"), csf("PR.DS-01")}},
		{ID: CheckSecurityGroupPorts, Service: "ec2", CloudSecurity: true, Severity: "high",
			Title:       "No security group opens admin or database ports to the internet",
			Description: "No security group allows inbound traffic from 0.0.0.0/0 or ::/0 to SSH (22), RDP (3389) or a database port (3306, 5432, 1433, 1521, 27017, 6379, 9200, 5439).",
			Remediation: "Edit the security group's inbound rules: restrict the source to known networks, or reach the host through a bastion, VPN or Session Manager.",
			Evidences:   []app.RequirementRef{iso("A.8.20"), iso("A.8.22"), soc2("CC6.6"), csf("PR.IR-01")}},
		{ID: CheckKMSRotation, Service: "kms", CloudSecurity: true, Severity: "medium",
			Title:       "KMS customer keys rotate",
			Description: "Each enabled symmetric customer-managed KMS key has automatic rotation on (GetKeyRotationStatus).",
			Remediation: "Open the key in KMS, Key rotation, and tick Automatically rotate this KMS key.",
			Evidences:   []app.RequirementRef{iso("A.8.24"), soc2("CC6.1"), csf("PR.DS-01")}},
		{ID: CheckGuardDuty, Service: "guardduty", CloudSecurity: true, Severity: "medium",
			Title:       "GuardDuty is enabled",
			Description: "In each checked region a GuardDuty detector exists and is enabled.",
			Remediation: "Enable GuardDuty in the region (GuardDuty, Get started) or from the organization's delegated administrator for all accounts.",
			Evidences:   []app.RequirementRef{iso("A.8.16"), soc2("CC7.2"), csf("DE.CM-01")}},
	},
}
