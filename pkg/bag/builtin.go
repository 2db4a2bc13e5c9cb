package bag

// builtinDefs are the field lines (comments stripped) of ROS 2 Humble's
// common_interfaces definitions of the standard
// message types that SQLite bags commonly hold, for when ROS 2 is not
// sourced: enough to tell whether a type starts with a std_msgs/Header and
// to write an MCAP schema for it.
var builtinDefs = map[string]string{
	"builtin_interfaces/Time": `int32 sec
uint32 nanosec
`,
	"builtin_interfaces/Duration": `int32 sec
uint32 nanosec
`,
	"std_msgs/Header": `builtin_interfaces/Time stamp
string frame_id
`,
	"geometry_msgs/Point": `float64 x
float64 y
float64 z
`,
	"geometry_msgs/Point32": `float32 x
float32 y
float32 z
`,
	"geometry_msgs/Quaternion": `float64 x 0
float64 y 0
float64 z 0
float64 w 1
`,
	"geometry_msgs/Vector3": `float64 x
float64 y
float64 z
`,
	"geometry_msgs/Pose": `Point position
Quaternion orientation
`,
	"geometry_msgs/Twist": `Vector3 linear
Vector3 angular
`,
	"geometry_msgs/Accel": `Vector3 linear
Vector3 angular
`,
	"geometry_msgs/Wrench": `Vector3 force
Vector3 torque
`,
	"geometry_msgs/Transform": `Vector3 translation
Quaternion rotation
`,
	"geometry_msgs/Polygon": `Point32[] points
`,
	"geometry_msgs/PoseWithCovariance": `Pose pose
float64[36] covariance
`,
	"geometry_msgs/TwistWithCovariance": `Twist twist
float64[36] covariance
`,
	"geometry_msgs/AccelWithCovariance": `Accel accel
float64[36] covariance
`,
	"geometry_msgs/PointStamped": `std_msgs/Header header
Point point
`,
	"geometry_msgs/PoseStamped": `std_msgs/Header header
Pose pose
`,
	"geometry_msgs/PoseWithCovarianceStamped": `std_msgs/Header header
PoseWithCovariance pose
`,
	"geometry_msgs/PoseArray": `std_msgs/Header header
Pose[] poses
`,
	"geometry_msgs/QuaternionStamped": `std_msgs/Header header
Quaternion quaternion
`,
	"geometry_msgs/TwistStamped": `std_msgs/Header header
Twist twist
`,
	"geometry_msgs/TwistWithCovarianceStamped": `std_msgs/Header header
TwistWithCovariance twist
`,
	"geometry_msgs/AccelStamped": `std_msgs/Header header
Accel accel
`,
	"geometry_msgs/AccelWithCovarianceStamped": `std_msgs/Header header
AccelWithCovariance accel
`,
	"geometry_msgs/Vector3Stamped": `std_msgs/Header header
Vector3 vector
`,
	"geometry_msgs/WrenchStamped": `std_msgs/Header header
Wrench wrench
`,
	"geometry_msgs/TransformStamped": `std_msgs/Header header
string child_frame_id
Transform transform
`,
	"geometry_msgs/PolygonStamped": `std_msgs/Header header
Polygon polygon
`,
	"sensor_msgs/Imu": `std_msgs/Header header
geometry_msgs/Quaternion orientation
float64[9] orientation_covariance
geometry_msgs/Vector3 angular_velocity
float64[9] angular_velocity_covariance
geometry_msgs/Vector3 linear_acceleration
float64[9] linear_acceleration_covariance
`,
	"sensor_msgs/LaserScan": `std_msgs/Header header
float32 angle_min
float32 angle_max
float32 angle_increment
float32 time_increment
float32 scan_time
float32 range_min
float32 range_max
float32[] ranges
float32[] intensities
`,
	"sensor_msgs/MultiEchoLaserScan": `std_msgs/Header header
float32 angle_min
float32 angle_max
float32 angle_increment
float32 time_increment
float32 scan_time
float32 range_min
float32 range_max
LaserEcho[] ranges
LaserEcho[] intensities
`,
	"sensor_msgs/LaserEcho": `float32[] echoes
`,
	"sensor_msgs/Image": `std_msgs/Header header
uint32 height
uint32 width
string encoding
uint8 is_bigendian
uint32 step
uint8[] data
`,
	"sensor_msgs/CompressedImage": `std_msgs/Header header
string format
uint8[] data
`,
	"sensor_msgs/CameraInfo": `std_msgs/Header header
uint32 height
uint32 width
string distortion_model
float64[] d
float64[9] k
float64[9] r
float64[12] p
uint32 binning_x
uint32 binning_y
RegionOfInterest roi
`,
	"sensor_msgs/RegionOfInterest": `uint32 x_offset
uint32 y_offset
uint32 height
uint32 width
bool do_rectify
`,
	"sensor_msgs/PointCloud2": `std_msgs/Header header
uint32 height
uint32 width
PointField[] fields
bool is_bigendian
uint32 point_step
uint32 row_step
uint8[] data
bool is_dense
`,
	"sensor_msgs/PointField": `uint8 INT8 = 1
uint8 UINT8 = 2
uint8 INT16 = 3
uint8 UINT16 = 4
uint8 INT32 = 5
uint8 UINT32 = 6
uint8 FLOAT32 = 7
uint8 FLOAT64 = 8
string name
uint32 offset
uint8 datatype
uint32 count
`,
	"sensor_msgs/PointCloud": `std_msgs/Header header
geometry_msgs/Point32[] points
ChannelFloat32[] channels
`,
	"sensor_msgs/ChannelFloat32": `string name
float32[] values
`,
	"sensor_msgs/NavSatFix": `std_msgs/Header header
NavSatStatus status
float64 latitude
float64 longitude
float64 altitude
float64[9] position_covariance
uint8 COVARIANCE_TYPE_UNKNOWN = 0
uint8 COVARIANCE_TYPE_APPROXIMATED = 1
uint8 COVARIANCE_TYPE_DIAGONAL_KNOWN = 2
uint8 COVARIANCE_TYPE_KNOWN = 3
uint8 position_covariance_type
`,
	"sensor_msgs/NavSatStatus": `int8 STATUS_NO_FIX = -1
int8 STATUS_FIX = 0
int8 STATUS_SBAS_FIX = 1
int8 STATUS_GBAS_FIX = 2
int8 status
uint16 SERVICE_GPS = 1
uint16 SERVICE_GLONASS = 2
uint16 SERVICE_COMPASS = 4
uint16 SERVICE_GALILEO = 8
uint16 service
`,
	"sensor_msgs/MagneticField": `std_msgs/Header header
geometry_msgs/Vector3 magnetic_field
float64[9] magnetic_field_covariance
`,
	"sensor_msgs/Temperature": `std_msgs/Header header
float64 temperature
float64 variance
`,
	"sensor_msgs/FluidPressure": `std_msgs/Header header
float64 fluid_pressure
float64 variance
`,
	"sensor_msgs/RelativeHumidity": `std_msgs/Header header
float64 relative_humidity
float64 variance
`,
	"sensor_msgs/Illuminance": `std_msgs/Header header
float64 illuminance
float64 variance
`,
	"sensor_msgs/Range": `std_msgs/Header header
uint8 ULTRASOUND=0
uint8 INFRARED=1
uint8 radiation_type
float32 field_of_view
float32 min_range
float32 max_range
float32 range
`,
	"sensor_msgs/JointState": `std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
`,
	"sensor_msgs/Joy": `std_msgs/Header header
float32[] axes
int32[] buttons
`,
	"sensor_msgs/BatteryState": `uint8 POWER_SUPPLY_STATUS_UNKNOWN = 0
uint8 POWER_SUPPLY_STATUS_CHARGING = 1
uint8 POWER_SUPPLY_STATUS_DISCHARGING = 2
uint8 POWER_SUPPLY_STATUS_NOT_CHARGING = 3
uint8 POWER_SUPPLY_STATUS_FULL = 4
uint8 POWER_SUPPLY_HEALTH_UNKNOWN = 0
uint8 POWER_SUPPLY_HEALTH_GOOD = 1
uint8 POWER_SUPPLY_HEALTH_OVERHEAT = 2
uint8 POWER_SUPPLY_HEALTH_DEAD = 3
uint8 POWER_SUPPLY_HEALTH_OVERVOLTAGE = 4
uint8 POWER_SUPPLY_HEALTH_UNSPEC_FAILURE = 5
uint8 POWER_SUPPLY_HEALTH_COLD = 6
uint8 POWER_SUPPLY_HEALTH_WATCHDOG_TIMER_EXPIRE = 7
uint8 POWER_SUPPLY_HEALTH_SAFETY_TIMER_EXPIRE = 8
uint8 POWER_SUPPLY_TECHNOLOGY_UNKNOWN = 0
uint8 POWER_SUPPLY_TECHNOLOGY_NIMH = 1
uint8 POWER_SUPPLY_TECHNOLOGY_LION = 2
uint8 POWER_SUPPLY_TECHNOLOGY_LIPO = 3
uint8 POWER_SUPPLY_TECHNOLOGY_LIFE = 4
uint8 POWER_SUPPLY_TECHNOLOGY_NICD = 5
uint8 POWER_SUPPLY_TECHNOLOGY_LIMN = 6
std_msgs/Header header
float32 voltage
float32 temperature
float32 current
float32 charge
float32 capacity
float32 design_capacity
float32 percentage
uint8 power_supply_status
uint8 power_supply_health
uint8 power_supply_technology
bool present
float32[] cell_voltage
float32[] cell_temperature
string location
string serial_number
`,
	"sensor_msgs/TimeReference": `std_msgs/Header header
builtin_interfaces/Time time_ref
string source
`,
	"nav_msgs/Odometry": `std_msgs/Header header
string child_frame_id
geometry_msgs/PoseWithCovariance pose
geometry_msgs/TwistWithCovariance twist
`,
	"nav_msgs/Path": `std_msgs/Header header
geometry_msgs/PoseStamped[] poses
`,
	"nav_msgs/OccupancyGrid": `std_msgs/Header header
MapMetaData info
int8[] data
`,
	"nav_msgs/MapMetaData": `builtin_interfaces/Time map_load_time
float32 resolution
uint32 width
uint32 height
geometry_msgs/Pose origin
`,
	"tf2_msgs/TFMessage": `geometry_msgs/TransformStamped[] transforms
`,
	"std_msgs/String": `string data
`,
}
