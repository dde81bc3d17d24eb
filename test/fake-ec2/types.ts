// The fake EC2's data shapes, free of Node imports so workerd tests can use them too.

export interface FakeInstance {
  instanceId: string;
  imageId: string;
  instanceType: string;
  /** pending | running | shutting-down | terminated | stopping | stopped */
  state: string;
  subnetId: string;
  vpcId: string;
  availabilityZone: string;
  privateIp: string;
  publicIp?: string;
  clientToken?: string;
  tags: Record<string, string>;
  launchTime: string;
  platform?: string;
  architecture: string;
  /** "spot" for spot instances. */
  lifecycle?: string;
  /** base64, as sent. */
  userData?: string;
  keyName?: string;
  iamInstanceProfile?: string;
  securityGroupIds: string[];
  launchTemplate?: Record<string, string>;
  blockDevice?: Record<string, string>;
  spotOptions?: Record<string, string>;
}

export interface RecordedEc2Request {
  at: number;
  action: string;
  /** Every query parameter but Action, as received (decoded). */
  params: Record<string, string>;
  status: number;
  /** EC2's error code when the call failed. */
  error_code: string | null;
  access_key_id: string | null;
}

/** A RunInstances attempt that fails with an EC2 error (capacity, spot price, …). */
export interface LaunchFault {
  code: string;
  instance_type?: string;
  subnet_id?: string;
  market?: "spot" | "on-demand";
  /** How many matching launches fail; unlimited when absent. */
  times?: number;
  message?: string;
}

/** Any action answering an EC2 error instead (permissions, throttling, outages). */
export interface ActionFault {
  action?: string;
  code: string;
  status?: number;
  message?: string;
  times?: number;
  /** Answer each matching call with this chance (0–1). */
  probability?: number;
}

export interface Ec2Faults {
  launch?: LaunchFault[];
  actions?: ActionFault[];
  /** Milliseconds before answering, per action. */
  latency_ms?: Record<string, number>;
}

export interface Ec2AccountConfig {
  /** DescribeInstances returns at most this many instances per page, whatever MaxResults says. */
  page_size?: number;
  /** DescribeInstanceTypes returns at most this many types per page (default 5), whatever MaxResults says. */
  instance_types_page_size?: number;
  /** pending → running after this long. */
  boot_delay_ms?: number;
  /** shutting-down → terminated, stopping → stopped after this long. */
  stop_delay_ms?: number;
  /** AMIs that do not exist (InvalidAMIID.NotFound). */
  missing_images?: string[];
  /** AMIs with a platform, architecture or root device other than Linux, x86_64, /dev/xvda. */
  images?: Record<string, { platform?: string; architecture?: string; root_device_name?: string }>;
}

export interface Ec2Account {
  id: string;
  access_key_id: string;
  secret_access_key: string;
  region: string;
  session_token?: string;
}
