"""Launch timealign's stream_aligner for two inputs with a parameter file."""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('in0', default_value='in0', description='first input topic'),
        DeclareLaunchArgument('in1', default_value='in1', description='second input topic'),
        DeclareLaunchArgument('namespace', default_value='', description='node namespace'),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([FindPackageShare('timealign'), 'config', 'stream_aligner.yaml']),
            description='parameter file (inputs, message_types, timeout_sec, periods_sec, ...)'),
        Node(
            package='timealign',
            executable='stream_aligner',
            namespace=LaunchConfiguration('namespace'),
            parameters=[LaunchConfiguration('params_file')],
            remappings=[('in0', LaunchConfiguration('in0')), ('in1', LaunchConfiguration('in1'))],
            output='screen',
        ),
    ])
