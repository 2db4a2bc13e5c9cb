"""Launch timealign's clock_sync with topic remapping and a parameter file."""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('in_topic', default_value='in', description='input topic'),
        DeclareLaunchArgument('out_topic', default_value='out', description='output topic'),
        DeclareLaunchArgument('namespace', default_value='', description='node namespace'),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([FindPackageShare('timealign'), 'config', 'clock_sync.yaml']),
            description='parameter file'),
        Node(
            package='timealign',
            executable='clock_sync',
            namespace=LaunchConfiguration('namespace'),
            parameters=[LaunchConfiguration('params_file')],
            remappings=[('in', LaunchConfiguration('in_topic')), ('out', LaunchConfiguration('out_topic'))],
            output='screen',
        ),
    ])
